;; A bedroom written for act-rs: a book lies on the bed and a desk lamp stands on the desk; look at the book under it.
(define (problem act_rs_look_at_obj_in_light_book)
    (:domain alfred)
    (:objects
        agent1 - agent
        BookType - otype
        CellPhoneType - otype
        DeskLampType - otype
        KnifeType - otype
        ButterKnifeType - otype
        BedType - rtype
        DeskType - rtype
        DrawerType - rtype
        ShelfType - rtype
        FridgeType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Book_bar_1 - object
        CellPhone_bar_1 - object
        DeskLamp_bar_1 - object
        Bed_bar_1 - receptacle
        Desk_bar_1 - receptacle
        Drawer_bar_1 - receptacle
        Shelf_bar_1 - receptacle
        loc_bar_0 - location
        loc_bar_1 - location
        loc_bar_2 - location
        loc_bar_3 - location
        loc_bar_4 - location
    )
    (:init
        (atLocation agent1 loc_bar_0)

        (receptacleType Bed_bar_1 BedType)
        (receptacleType Desk_bar_1 DeskType)
        (receptacleType Drawer_bar_1 DrawerType)
        (receptacleType Shelf_bar_1 ShelfType)

        (receptacleAtLocation Bed_bar_1 loc_bar_1)
        (receptacleAtLocation Desk_bar_1 loc_bar_2)
        (receptacleAtLocation Drawer_bar_1 loc_bar_3)
        (receptacleAtLocation Shelf_bar_1 loc_bar_4)

        (openable Drawer_bar_1)

        (objectType Book_bar_1 BookType)
        (objectType CellPhone_bar_1 CellPhoneType)
        (objectType DeskLamp_bar_1 DeskLampType)
        (pickupable Book_bar_1)
        (pickupable CellPhone_bar_1)
        (toggleable DeskLamp_bar_1)

        (inReceptacle Book_bar_1 Bed_bar_1)
        (objectAtLocation Book_bar_1 loc_bar_1)
        (inReceptacle CellPhone_bar_1 Drawer_bar_1)
        (objectAtLocation CellPhone_bar_1 loc_bar_3)
        (inReceptacle DeskLamp_bar_1 Desk_bar_1)
        (objectAtLocation DeskLamp_bar_1 loc_bar_2)

        (canContain BedType BookType)
        (canContain BedType CellPhoneType)
        (canContain DeskType BookType)
        (canContain DeskType CellPhoneType)
        (canContain DrawerType BookType)
        (canContain DrawerType CellPhoneType)
        (canContain ShelfType BookType)
        (canContain ShelfType CellPhoneType)
    )
    (:goal
        (and
            (exists (?ot - object
                     ?r - receptacle
                     ?a - agent
                     ?l - location)
                (and
                    (objectType ?ot DeskLampType)
                    (toggleable ?ot)
                    (isToggled ?ot)
                    (receptacleAtLocation ?r ?l)
                    (atLocation ?a ?l)
                    (inReceptacle ?ot ?r)
                )
            )
            (exists (?o - object
                     ?a - agent)
                (and
                    (objectType ?o BookType)
                    (holds ?a ?o)
                )
            )
        )
    )
)
