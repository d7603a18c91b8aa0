;; A small kitchen written for act-rs: the apple waits on the countertop, the task is to put it on the dining table.
;; Entity ids follow the ALFRED convention (Class|x|y|z with | - + . mangled) so that ALFWorld's demangler names them.
(define (problem act_rs_pick_and_place_simple_apple)
    (:domain alfred)
    (:objects
        agent1 - agent
        AppleType - otype
        MugType - otype
        KnifeType - otype
        ButterKnifeType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DiningTableType - rtype
        FridgeType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40 - object
        Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30 - object
        Cabinet_bar__minus_01_dot_50_bar__plus_00_dot_40_bar__plus_00_dot_90 - receptacle
        CounterTop_bar__minus_01_dot_20_bar__plus_00_dot_90_bar__plus_00_dot_40 - receptacle
        DiningTable_bar__plus_01_dot_10_bar__plus_00_dot_75_bar__minus_00_dot_30 - receptacle
        Fridge_bar__minus_02_dot_00_bar__plus_00_dot_00_bar__minus_01_dot_00 - receptacle
        Microwave_bar__minus_01_dot_60_bar__plus_01_dot_30_bar__plus_00_dot_90 - receptacle
        Sink_bar__minus_00_dot_50_bar__plus_00_dot_90_bar__plus_01_dot_40_bar_SinkBasin - receptacle
        loc_bar__minus_1_bar_2_bar_3_bar_45 - location
        loc_bar__minus_5_bar_3_bar_3_bar_30 - location
        loc_bar__minus_4_bar_1_bar_3_bar_30 - location
        loc_bar_4_bar_0_bar_1_bar_60 - location
        loc_bar__minus_7_bar__minus_4_bar_3_bar_15 - location
        loc_bar__minus_6_bar_3_bar_3_bar_0 - location
        loc_bar__minus_2_bar_5_bar_0_bar_45 - location
    )
    (:init
        (atLocation agent1 loc_bar__minus_1_bar_2_bar_3_bar_45)

        (receptacleType Cabinet_bar__minus_01_dot_50_bar__plus_00_dot_40_bar__plus_00_dot_90 CabinetType)
        (receptacleType CounterTop_bar__minus_01_dot_20_bar__plus_00_dot_90_bar__plus_00_dot_40 CounterTopType)
        (receptacleType DiningTable_bar__plus_01_dot_10_bar__plus_00_dot_75_bar__minus_00_dot_30 DiningTableType)
        (receptacleType Fridge_bar__minus_02_dot_00_bar__plus_00_dot_00_bar__minus_01_dot_00 FridgeType)
        (receptacleType Microwave_bar__minus_01_dot_60_bar__plus_01_dot_30_bar__plus_00_dot_90 MicrowaveType)
        (receptacleType Sink_bar__minus_00_dot_50_bar__plus_00_dot_90_bar__plus_01_dot_40_bar_SinkBasin SinkBasinType)

        (receptacleAtLocation Cabinet_bar__minus_01_dot_50_bar__plus_00_dot_40_bar__plus_00_dot_90 loc_bar__minus_5_bar_3_bar_3_bar_30)
        (receptacleAtLocation CounterTop_bar__minus_01_dot_20_bar__plus_00_dot_90_bar__plus_00_dot_40 loc_bar__minus_4_bar_1_bar_3_bar_30)
        (receptacleAtLocation DiningTable_bar__plus_01_dot_10_bar__plus_00_dot_75_bar__minus_00_dot_30 loc_bar_4_bar_0_bar_1_bar_60)
        (receptacleAtLocation Fridge_bar__minus_02_dot_00_bar__plus_00_dot_00_bar__minus_01_dot_00 loc_bar__minus_7_bar__minus_4_bar_3_bar_15)
        (receptacleAtLocation Microwave_bar__minus_01_dot_60_bar__plus_01_dot_30_bar__plus_00_dot_90 loc_bar__minus_6_bar_3_bar_3_bar_0)
        (receptacleAtLocation Sink_bar__minus_00_dot_50_bar__plus_00_dot_90_bar__plus_01_dot_40_bar_SinkBasin loc_bar__minus_2_bar_5_bar_0_bar_45)

        (openable Cabinet_bar__minus_01_dot_50_bar__plus_00_dot_40_bar__plus_00_dot_90)
        (openable Fridge_bar__minus_02_dot_00_bar__plus_00_dot_00_bar__minus_01_dot_00)
        (openable Microwave_bar__minus_01_dot_60_bar__plus_01_dot_30_bar__plus_00_dot_90)

        (objectType Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40 AppleType)
        (objectType Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30 MugType)
        (pickupable Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40)
        (pickupable Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30)
        (isReceptacleObject Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30)
        (heatable Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40)
        (coolable Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40)
        (cleanable Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40)
        (heatable Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30)
        (coolable Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30)
        (cleanable Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30)

        (inReceptacle Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40 CounterTop_bar__minus_01_dot_20_bar__plus_00_dot_90_bar__plus_00_dot_40)
        (objectAtLocation Apple_bar__minus_01_dot_20_bar__plus_00_dot_95_bar__plus_00_dot_40 loc_bar__minus_4_bar_1_bar_3_bar_30)
        (inReceptacle Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30 DiningTable_bar__plus_01_dot_10_bar__plus_00_dot_75_bar__minus_00_dot_30)
        (objectAtLocation Mug_bar__plus_01_dot_10_bar__plus_00_dot_80_bar__minus_00_dot_30 loc_bar_4_bar_0_bar_1_bar_60)

        (canContain CabinetType MugType)
        (canContain CounterTopType AppleType)
        (canContain CounterTopType MugType)
        (canContain DiningTableType AppleType)
        (canContain DiningTableType MugType)
        (canContain FridgeType AppleType)
        (canContain FridgeType MugType)
        (canContain MicrowaveType AppleType)
        (canContain MicrowaveType MugType)
        (canContain SinkBasinType AppleType)
        (canContain SinkBasinType MugType)
    )
    (:goal
        (and
            (exists (?r - receptacle)
                (exists (?o - object)
                    (and
                        (inReceptacle ?o ?r)
                        (objectType ?o AppleType)
                        (receptacleType ?r DiningTableType)
                    )
                )
            )
        )
    )
)
