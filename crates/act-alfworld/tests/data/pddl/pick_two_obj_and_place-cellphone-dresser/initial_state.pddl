;; A bedroom written for act-rs: one cellphone on the bed, one in a closed drawer; put both on the dresser.
(define (problem act_rs_pick_two_obj_and_place_cellphone)
    (:domain alfred)
    (:objects
        agent1 - agent
        CellPhoneType - otype
        PenType - otype
        KnifeType - otype
        ButterKnifeType - otype
        BedType - rtype
        DresserType - rtype
        DrawerType - rtype
        SideTableType - rtype
        FridgeType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        CellPhone_bar_1 - object
        CellPhone_bar_2 - object
        Pen_bar_1 - object
        Bed_bar_1 - receptacle
        Dresser_bar_1 - receptacle
        Drawer_bar_1 - receptacle
        Drawer_bar_2 - receptacle
        SideTable_bar_1 - receptacle
        loc_bar_0 - location
        loc_bar_1 - location
        loc_bar_2 - location
        loc_bar_3 - location
        loc_bar_4 - location
        loc_bar_5 - location
    )
    (:init
        (atLocation agent1 loc_bar_0)

        (receptacleType Bed_bar_1 BedType)
        (receptacleType Dresser_bar_1 DresserType)
        (receptacleType Drawer_bar_1 DrawerType)
        (receptacleType Drawer_bar_2 DrawerType)
        (receptacleType SideTable_bar_1 SideTableType)

        (receptacleAtLocation Bed_bar_1 loc_bar_1)
        (receptacleAtLocation Dresser_bar_1 loc_bar_2)
        (receptacleAtLocation Drawer_bar_1 loc_bar_3)
        (receptacleAtLocation Drawer_bar_2 loc_bar_4)
        (receptacleAtLocation SideTable_bar_1 loc_bar_5)

        (openable Drawer_bar_1)
        (openable Drawer_bar_2)

        (objectType CellPhone_bar_1 CellPhoneType)
        (objectType CellPhone_bar_2 CellPhoneType)
        (objectType Pen_bar_1 PenType)
        (pickupable CellPhone_bar_1)
        (pickupable CellPhone_bar_2)
        (pickupable Pen_bar_1)

        (inReceptacle CellPhone_bar_1 Bed_bar_1)
        (objectAtLocation CellPhone_bar_1 loc_bar_1)
        (inReceptacle CellPhone_bar_2 Drawer_bar_2)
        (objectAtLocation CellPhone_bar_2 loc_bar_4)
        (inReceptacle Pen_bar_1 SideTable_bar_1)
        (objectAtLocation Pen_bar_1 loc_bar_5)

        (canContain BedType CellPhoneType)
        (canContain DresserType CellPhoneType)
        (canContain DresserType PenType)
        (canContain DrawerType CellPhoneType)
        (canContain DrawerType PenType)
        (canContain SideTableType CellPhoneType)
        (canContain SideTableType PenType)
    )
    (:goal
        (and
            (exists (?r - receptacle)
                (exists (?o1 - object)
                    (and
                        (objectType ?o1 CellPhoneType)
                        (receptacleType ?r DresserType)
                        (inReceptacle ?o1 ?r)
                        (exists (?o2 - object)
                            (and
                                (not (= ?o1 ?o2))
                                (objectType ?o2 CellPhoneType)
                                (receptacleType ?r DresserType)
                                (inReceptacle ?o2 ?r)
                            )
                        )
                    )
                )
            )
        )
    )
)
