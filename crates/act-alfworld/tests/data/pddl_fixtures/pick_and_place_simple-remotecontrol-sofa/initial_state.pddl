;; A living room written for act-rs, with classes of upstream's `OBJECTS` beyond the procedural vocabulary, stated
;; the way upstream's game files state them: a houseplant on the side table and a television on the TV stand
;; (fixtures: in a receptacle, not pickupable), a teddybear on the armchair (pickupable, but no receptacle
;; `canContain`s it), paintings, a window, boots and a light switch in no receptacle (only at a location, or with no
;; fact at all), and bare class names declared as objects. One remote control is on the armchair, one in a closed
;; drawer; put one on the sofa.
(define (problem act_rs_pick_and_place_simple_remotecontrol)
    (:domain alfred)
    (:objects
        agent1 - agent
        HousePlant - object
        Painting - object
        RemoteControl - object
        RemoteControlType - otype
        HousePlantType - otype
        TelevisionType - otype
        TeddyBearType - otype
        PaintingType - otype
        WindowType - otype
        BootsType - otype
        LightSwitchType - otype
        KnifeType - otype
        ButterKnifeType - otype
        ArmChairType - rtype
        DrawerType - rtype
        SideTableType - rtype
        SofaType - rtype
        TVStandType - rtype
        RemoteControl_bar_1 - object
        RemoteControl_bar_2 - object
        HousePlant_bar_1 - object
        Television_bar_1 - object
        TeddyBear_bar_1 - object
        Painting_bar_1 - object
        Painting_bar_2 - object
        Window_bar_1 - object
        Boots_bar_1 - object
        LightSwitch_bar_1 - object
        ArmChair_bar_1 - receptacle
        Drawer_bar_1 - receptacle
        SideTable_bar_1 - receptacle
        Sofa_bar_1 - receptacle
        TVStand_bar_1 - receptacle
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

        (receptacleType ArmChair_bar_1 ArmChairType)
        (receptacleType Drawer_bar_1 DrawerType)
        (receptacleType SideTable_bar_1 SideTableType)
        (receptacleType Sofa_bar_1 SofaType)
        (receptacleType TVStand_bar_1 TVStandType)

        (receptacleAtLocation ArmChair_bar_1 loc_bar_4)
        (receptacleAtLocation Drawer_bar_1 loc_bar_5)
        (receptacleAtLocation SideTable_bar_1 loc_bar_2)
        (receptacleAtLocation Sofa_bar_1 loc_bar_1)
        (receptacleAtLocation TVStand_bar_1 loc_bar_3)

        (openable Drawer_bar_1)

        (objectType RemoteControl_bar_1 RemoteControlType)
        (objectType RemoteControl_bar_2 RemoteControlType)
        (objectType HousePlant_bar_1 HousePlantType)
        (objectType Television_bar_1 TelevisionType)
        (objectType TeddyBear_bar_1 TeddyBearType)
        (objectType Painting_bar_1 PaintingType)
        (objectType Painting_bar_2 PaintingType)
        (objectType Window_bar_1 WindowType)
        (objectType Boots_bar_1 BootsType)
        (objectType LightSwitch_bar_1 LightSwitchType)
        (pickupable RemoteControl_bar_1)
        (pickupable RemoteControl_bar_2)
        (pickupable TeddyBear_bar_1)
        (pickupable Boots_bar_1)

        (inReceptacle RemoteControl_bar_1 Drawer_bar_1)
        (objectAtLocation RemoteControl_bar_1 loc_bar_5)
        (inReceptacle RemoteControl_bar_2 ArmChair_bar_1)
        (objectAtLocation RemoteControl_bar_2 loc_bar_4)
        (inReceptacle HousePlant_bar_1 SideTable_bar_1)
        (objectAtLocation HousePlant_bar_1 loc_bar_2)
        (inReceptacle Television_bar_1 TVStand_bar_1)
        (objectAtLocation Television_bar_1 loc_bar_3)
        (inReceptacle TeddyBear_bar_1 ArmChair_bar_1)
        (objectAtLocation TeddyBear_bar_1 loc_bar_4)
        (objectAtLocation Painting_bar_1 loc_bar_1)
        (objectAtLocation Painting_bar_2 loc_bar_6)
        (objectAtLocation Window_bar_1 loc_bar_0)
        (objectAtLocation Boots_bar_1 loc_bar_4)

        (canContain ArmChairType RemoteControlType)
        (canContain DrawerType RemoteControlType)
        (canContain SideTableType RemoteControlType)
        (canContain SofaType RemoteControlType)
    )
    (:goal
        (and
            (exists (?r - receptacle)
                (exists (?o - object)
                    (and
                        (inReceptacle ?o ?r)
                        (objectType ?o RemoteControlType)
                        (receptacleType ?r SofaType)
                    )
                )
            )
        )
    )
)
