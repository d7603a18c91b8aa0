;; A kitchen written for act-rs: a potato waits in the closed fridge; heat it and put it on the countertop.
(define (problem act_rs_pick_heat_then_place_in_recep_potato)
    (:domain alfred)
    (:objects
        agent1 - agent
        PotatoType - otype
        EggType - otype
        KnifeType - otype
        ButterKnifeType - otype
        CabinetType - rtype
        CounterTopType - rtype
        FridgeType - rtype
        GarbageCanType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Potato_bar_1 - object
        Egg_bar_1 - object
        Cabinet_bar_1 - receptacle
        Cabinet_bar_2 - receptacle
        CounterTop_bar_1 - receptacle
        Fridge_bar_1 - receptacle
        GarbageCan_bar_1 - receptacle
        Microwave_bar_1 - receptacle
        loc_bar_0 - location
        loc_bar_1 - location
        loc_bar_2 - location
        loc_bar_3 - location
        loc_bar_4 - location
        loc_bar_5 - location
        loc_bar_6 - location
    )
    (:init
        (atLocation agent1 loc_bar_0)

        (receptacleType Cabinet_bar_1 CabinetType)
        (receptacleType Cabinet_bar_2 CabinetType)
        (receptacleType CounterTop_bar_1 CounterTopType)
        (receptacleType Fridge_bar_1 FridgeType)
        (receptacleType GarbageCan_bar_1 GarbageCanType)
        (receptacleType Microwave_bar_1 MicrowaveType)

        (receptacleAtLocation Cabinet_bar_1 loc_bar_1)
        (receptacleAtLocation Cabinet_bar_2 loc_bar_2)
        (receptacleAtLocation CounterTop_bar_1 loc_bar_3)
        (receptacleAtLocation Fridge_bar_1 loc_bar_4)
        (receptacleAtLocation GarbageCan_bar_1 loc_bar_5)
        (receptacleAtLocation Microwave_bar_1 loc_bar_6)

        (openable Cabinet_bar_1)
        (openable Cabinet_bar_2)
        (openable Fridge_bar_1)
        (openable Microwave_bar_1)

        (objectType Potato_bar_1 PotatoType)
        (objectType Egg_bar_1 EggType)
        (pickupable Potato_bar_1)
        (pickupable Egg_bar_1)
        (heatable Potato_bar_1)
        (coolable Potato_bar_1)
        (cleanable Potato_bar_1)
        (heatable Egg_bar_1)
        (coolable Egg_bar_1)
        (cleanable Egg_bar_1)

        (inReceptacle Potato_bar_1 Fridge_bar_1)
        (objectAtLocation Potato_bar_1 loc_bar_4)
        (inReceptacle Egg_bar_1 CounterTop_bar_1)
        (objectAtLocation Egg_bar_1 loc_bar_3)

        (canContain CounterTopType PotatoType)
        (canContain CounterTopType EggType)
        (canContain FridgeType PotatoType)
        (canContain FridgeType EggType)
        (canContain GarbageCanType PotatoType)
        (canContain GarbageCanType EggType)
        (canContain MicrowaveType PotatoType)
        (canContain MicrowaveType EggType)
    )
    (:goal
        (and
            (exists (?r - receptacle)
                (exists (?o - object)
                    (and
                        (heatable ?o)
                        (objectType ?o PotatoType)
                        (receptacleType ?r CounterTopType)
                        (isHot ?o)
                        (inReceptacle ?o ?r)
                    )
                )
            )
        )
    )
)
