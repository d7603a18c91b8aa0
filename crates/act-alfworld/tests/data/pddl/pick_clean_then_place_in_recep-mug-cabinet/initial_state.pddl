;; A kitchen corner written for act-rs: a mug stands on the dining table; clean it and put it in the cabinet.
(define (problem act_rs_pick_clean_then_place_in_recep_mug)
    (:domain alfred)
    (:objects
        agent1 - agent
        MugType - otype
        CupType - otype
        KnifeType - otype
        ButterKnifeType - otype
        CabinetType - rtype
        CoffeeMachineType - rtype
        DiningTableType - rtype
        FridgeType - rtype
        MicrowaveType - rtype
        ShelfType - rtype
        SinkBasinType - rtype
        Mug_bar_1 - object
        Cup_bar_1 - object
        Cabinet_bar_1 - receptacle
        CoffeeMachine_bar_1 - receptacle
        DiningTable_bar_1 - receptacle
        Shelf_bar_1 - receptacle
        Sink_bar_1_bar_SinkBasin - receptacle
        loc_bar_0 - location
        loc_bar_1 - location
        loc_bar_2 - location
        loc_bar_3 - location
        loc_bar_4 - location
        loc_bar_5 - location
    )
    (:init
        (atLocation agent1 loc_bar_0)

        (receptacleType Cabinet_bar_1 CabinetType)
        (receptacleType CoffeeMachine_bar_1 CoffeeMachineType)
        (receptacleType DiningTable_bar_1 DiningTableType)
        (receptacleType Shelf_bar_1 ShelfType)
        (receptacleType Sink_bar_1_bar_SinkBasin SinkBasinType)

        (receptacleAtLocation Cabinet_bar_1 loc_bar_1)
        (receptacleAtLocation CoffeeMachine_bar_1 loc_bar_2)
        (receptacleAtLocation DiningTable_bar_1 loc_bar_3)
        (receptacleAtLocation Shelf_bar_1 loc_bar_4)
        (receptacleAtLocation Sink_bar_1_bar_SinkBasin loc_bar_5)

        (openable Cabinet_bar_1)

        (objectType Mug_bar_1 MugType)
        (objectType Cup_bar_1 CupType)
        (pickupable Mug_bar_1)
        (isReceptacleObject Mug_bar_1)
        (pickupable Cup_bar_1)
        (isReceptacleObject Cup_bar_1)
        (cleanable Mug_bar_1)
        (heatable Mug_bar_1)
        (coolable Mug_bar_1)
        (cleanable Cup_bar_1)
        (heatable Cup_bar_1)
        (coolable Cup_bar_1)

        (inReceptacle Mug_bar_1 DiningTable_bar_1)
        (objectAtLocation Mug_bar_1 loc_bar_3)
        (inReceptacle Cup_bar_1 Shelf_bar_1)
        (objectAtLocation Cup_bar_1 loc_bar_4)

        (canContain CabinetType MugType)
        (canContain CabinetType CupType)
        (canContain CoffeeMachineType MugType)
        (canContain DiningTableType MugType)
        (canContain DiningTableType CupType)
        (canContain ShelfType MugType)
        (canContain ShelfType CupType)
        (canContain SinkBasinType MugType)
        (canContain SinkBasinType CupType)
    )
    (:goal
        (and
            (exists (?r - receptacle)
                (exists (?o - object)
                    (and
                        (cleanable ?o)
                        (objectType ?o MugType)
                        (receptacleType ?r CabinetType)
                        (isClean ?o)
                        (inReceptacle ?o ?r)
                    )
                )
            )
        )
    )
)
