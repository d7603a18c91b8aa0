//! The upstream ALFWorld vocabulary as Rust data.
//!
//! Facts re-expressed from `alfworld/gen/constants.py`: the object classes an agent can meet in
//! the text world, the static receptacle classes, which receptacle may hold which object class
//! (`VAL_RECEPTACLE_OBJECTS`, which is also the "where objects usually are" prior of the
//! handcoded expert), and the openable / heatable / coolable / cleanable / toggleable / sliceable
//! sets. Sliced variants (`AppleSliced`...) are dropped: in the text world slicing only sets a flag.
//! Names are the lower-case class names the text uses ("alarmclock", "sinkbasin").
//!
//! Every class of upstream's `OBJECTS` is here: the static receptacles as [`ReceptacleClass`], everything else as
//! [`ObjectClass`], fixtures included (the houseplant, the television, the window...: objects of upstream's game files
//! that nothing picks up). Which classes can be picked up is not in `constants.py` but in each game's `pickupable`
//! facts (AI2-THOR's metadata); the table here is what upstream's games state.

use serde::{Deserialize, Serialize};

macro_rules! class_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[repr(u8)]
        pub enum $name {
            $(#[doc = concat!("`", $text, "`")] $variant),*
        }

        impl $name {
            /// Every class, in ascending order of its text name.
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// The lower-case name the text uses ("sinkbasin").
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),*
                }
            }

            /// The class with this lower-case text name.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($text => Some(Self::$variant),)*
                    _ => None,
                }
            }

            /// Position in [`Self::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

class_enum! {
    /// An object class: something that lies in a receptacle (and, except lamps and fixtures such as the houseplant,
    /// can be picked up).
    ObjectClass {
        AlarmClock => "alarmclock",
        Apple => "apple",
        BaseballBat => "baseballbat",
        BasketBall => "basketball",
        Bathtub => "bathtub",
        Blinds => "blinds",
        Book => "book",
        Boots => "boots",
        Bowl => "bowl",
        Box => "box",
        Bread => "bread",
        ButterKnife => "butterknife",
        Candle => "candle",
        Cd => "cd",
        CellPhone => "cellphone",
        Chair => "chair",
        Cloth => "cloth",
        CreditCard => "creditcard",
        Cup => "cup",
        Curtains => "curtains",
        DeskLamp => "desklamp",
        DishSponge => "dishsponge",
        Egg => "egg",
        FloorLamp => "floorlamp",
        Footstool => "footstool",
        Fork => "fork",
        GlassBottle => "glassbottle",
        HandTowel => "handtowel",
        HousePlant => "houseplant",
        Kettle => "kettle",
        KeyChain => "keychain",
        Knife => "knife",
        Ladle => "ladle",
        Laptop => "laptop",
        LaundryHamperLid => "laundryhamperlid",
        Lettuce => "lettuce",
        LightSwitch => "lightswitch",
        Mirror => "mirror",
        Mug => "mug",
        Newspaper => "newspaper",
        Painting => "painting",
        Pan => "pan",
        PaperTowel => "papertowel",
        PaperTowelRoll => "papertowelroll",
        Pen => "pen",
        Pencil => "pencil",
        PepperShaker => "peppershaker",
        Pillow => "pillow",
        Plate => "plate",
        Plunger => "plunger",
        Poster => "poster",
        Pot => "pot",
        Potato => "potato",
        RemoteControl => "remotecontrol",
        SaltShaker => "saltshaker",
        ScrubBrush => "scrubbrush",
        ShowerDoor => "showerdoor",
        ShowerGlass => "showerglass",
        Sink => "sink",
        SoapBar => "soapbar",
        SoapBottle => "soapbottle",
        Spatula => "spatula",
        Spoon => "spoon",
        SprayBottle => "spraybottle",
        Statue => "statue",
        StoveKnob => "stoveknob",
        TeddyBear => "teddybear",
        Television => "television",
        TennisRacket => "tennisracket",
        TissueBox => "tissuebox",
        ToiletPaper => "toiletpaper",
        ToiletPaperRoll => "toiletpaperroll",
        Tomato => "tomato",
        Towel => "towel",
        Vase => "vase",
        Watch => "watch",
        WateringCan => "wateringcan",
        Window => "window",
        WineBottle => "winebottle",
    }
}

class_enum! {
    /// A static receptacle class: furniture and appliances the agent goes to.
    ReceptacleClass {
        ArmChair => "armchair",
        BathtubBasin => "bathtubbasin",
        Bed => "bed",
        Cabinet => "cabinet",
        Cart => "cart",
        CoffeeMachine => "coffeemachine",
        CoffeeTable => "coffeetable",
        CounterTop => "countertop",
        Desk => "desk",
        DiningTable => "diningtable",
        Drawer => "drawer",
        Dresser => "dresser",
        Fridge => "fridge",
        GarbageCan => "garbagecan",
        HandTowelHolder => "handtowelholder",
        LaundryHamper => "laundryhamper",
        Microwave => "microwave",
        Ottoman => "ottoman",
        Safe => "safe",
        Shelf => "shelf",
        SideTable => "sidetable",
        SinkBasin => "sinkbasin",
        Sofa => "sofa",
        StoveBurner => "stoveburner",
        Toaster => "toaster",
        Toilet => "toilet",
        ToiletPaperHanger => "toiletpaperhanger",
        TowelHolder => "towelholder",
        TvStand => "tvstand",
    }
}

use ObjectClass as O;

/// A set of object classes, one bit per class (at most 128 classes).
type ClassMask = u128;

const fn mask(classes: &[ObjectClass]) -> ClassMask {
    let mut bits: ClassMask = 0;
    let mut i = 0;
    while i < classes.len() {
        bits |= 1 << (classes[i] as u32);
        i += 1;
    }
    bits
}

const HEATABLE: ClassMask = mask(&[O::Apple, O::Bread, O::Cup, O::Egg, O::Mug, O::Plate, O::Potato, O::Tomato]);
const COOLABLE: ClassMask = mask(&[
    O::Apple,
    O::Bowl,
    O::Bread,
    O::Cup,
    O::Egg,
    O::Lettuce,
    O::Mug,
    O::Pan,
    O::Plate,
    O::Pot,
    O::Potato,
    O::Tomato,
    O::WineBottle,
]);
const CLEANABLE: ClassMask = mask(&[
    O::Apple,
    O::Bowl,
    O::ButterKnife,
    O::Cloth,
    O::Cup,
    O::DishSponge,
    O::Egg,
    O::Fork,
    O::Kettle,
    O::Knife,
    O::Ladle,
    O::Lettuce,
    O::Mug,
    O::Pan,
    O::Plate,
    O::Pot,
    O::Potato,
    O::SoapBar,
    O::Spatula,
    O::Spoon,
    O::Tomato,
]);
const TOGGLEABLE: ClassMask = mask(&[O::DeskLamp, O::FloorLamp]);
const SLICEABLE: ClassMask = mask(&[O::Apple, O::Bread, O::Egg, O::Lettuce, O::Potato, O::Tomato]);
const SHARP: ClassMask = mask(&[O::Knife, O::ButterKnife]);
/// `MOVABLE_RECEPTACLES`: objects that are themselves containers ("This is a normal mug 1.").
const RECEPTACLE_OBJECT: ClassMask = mask(&[O::Bowl, O::Box, O::Cup, O::Mug, O::Plate, O::Pan, O::Pot]);
/// Classes upstream's games do not state `pickupable`: the lamps, and the fixtures among upstream's `OBJECTS`. In
/// upstream's games most fixtures stand in no receptacle (paintings, windows, light switches: no `inReceptacle`),
/// which the text never names; some do (a houseplant on the countertop, a television on the tvstand, a mirror on the
/// dresser), and those are listed there like a lamp, but cannot be taken. Of the five footstools in 706 of
/// upstream's games (`json_2.1.1`'s valid_seen, valid_unseen and valid_train) two are `pickupable` and three are
/// not, and none is in a receptacle: the majority is kept, and no command reaches one either way.
const FIXED: ClassMask = mask(&[
    O::Bathtub,
    O::Blinds,
    O::Chair,
    O::Curtains,
    O::DeskLamp,
    O::FloorLamp,
    O::Footstool,
    O::HousePlant,
    O::LaundryHamperLid,
    O::LightSwitch,
    O::Mirror,
    O::Painting,
    O::Poster,
    O::ShowerDoor,
    O::ShowerGlass,
    O::Sink,
    O::StoveKnob,
    O::Television,
    O::Window,
]);
/// The classes upstream's `OBJECTS` has beyond the 58 the native vocabulary started with: the fixtures but the
/// lamps, and four movables no `VAL_RECEPTACLE_OBJECTS` entry names (boots, papertowelroll, scrubbrush, teddybear:
/// they can be taken, but no receptacle `canContain`s them, so they are never put down again).
const UPSTREAM_ONLY: ClassMask =
    (FIXED & !TOGGLEABLE) | mask(&[O::Boots, O::PaperTowelRoll, O::ScrubBrush, O::TeddyBear]);

const PROCEDURAL_LEN: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < ObjectClass::ALL.len() {
        if ObjectClass::ALL[i].procedural() {
            count += 1;
        }
        i += 1;
    }
    count
};

const PROCEDURAL_CLASSES: [ObjectClass; PROCEDURAL_LEN] = {
    let mut out = [ObjectClass::AlarmClock; PROCEDURAL_LEN];
    let (mut i, mut j) = (0, 0);
    while i < ObjectClass::ALL.len() {
        if ObjectClass::ALL[i].procedural() {
            out[j] = ObjectClass::ALL[i];
            j += 1;
        }
        i += 1;
    }
    out
};

impl ObjectClass {
    /// Can be heated in a microwave.
    pub const fn heatable(self) -> bool {
        HEATABLE >> (self as u32) & 1 == 1
    }
    /// Can be cooled in a fridge.
    pub const fn coolable(self) -> bool {
        COOLABLE >> (self as u32) & 1 == 1
    }
    /// Can be cleaned in a sink basin.
    pub const fn cleanable(self) -> bool {
        CLEANABLE >> (self as u32) & 1 == 1
    }
    /// A lamp that `use` turns on.
    pub const fn toggleable(self) -> bool {
        TOGGLEABLE >> (self as u32) & 1 == 1
    }
    /// Can be sliced with a knife.
    pub const fn sliceable(self) -> bool {
        SLICEABLE >> (self as u32) & 1 == 1
    }
    /// A knife or butter knife, which can slice.
    pub const fn sharp(self) -> bool {
        SHARP >> (self as u32) & 1 == 1
    }
    /// A movable container (bowl, box, cup, mug, plate, pan, pot).
    pub const fn receptacle_object(self) -> bool {
        RECEPTACLE_OBJECT >> (self as u32) & 1 == 1
    }
    /// Can be picked up: everything but the lamps and the fixtures (houseplant, painting, television, window...).
    pub const fn pickupable(self) -> bool {
        FIXED >> (self as u32) & 1 == 0
    }
    /// One of the 58 classes the native vocabulary had before it took in the rest of upstream's `OBJECTS`
    /// ([`ObjectClass::PROCEDURAL`]).
    pub const fn procedural(self) -> bool {
        UPSTREAM_ONLY >> (self as u32) & 1 == 0
    }
    /// The 58 classes the native vocabulary had before it took in the rest of upstream's `OBJECTS`, in
    /// [`ObjectClass::ALL`] order. The procedural scenes draw only from these (their room pools and lamps), and
    /// [`ClassSwap`](crate::ClassSwap) swaps among these only: every seeded game, text and augmented episode is what it
    /// was before the vocabulary grew. Code that draws classes from a seed should draw from this list too.
    pub const PROCEDURAL: &'static [ObjectClass] = &PROCEDURAL_CLASSES;
    /// Receptacle classes that may hold this class, in [`ReceptacleClass::ALL`] order (the
    /// expert's "where objects usually are" prior).
    pub fn usual_receptacles(self) -> impl Iterator<Item = ReceptacleClass> {
        ReceptacleClass::ALL.iter().copied().filter(move |r| r.can_contain(self))
    }
}

const TABLE_TOP: &[ObjectClass] = &[
    O::AlarmClock,
    O::Apple,
    O::BaseballBat,
    O::BasketBall,
    O::Book,
    O::Bowl,
    O::Box,
    O::Bread,
    O::ButterKnife,
    O::Candle,
    O::Cd,
    O::CellPhone,
    O::Cloth,
    O::CreditCard,
    O::Cup,
    O::DishSponge,
    O::GlassBottle,
    O::Egg,
    O::Fork,
    O::Kettle,
    O::KeyChain,
    O::Knife,
    O::Ladle,
    O::Laptop,
    O::Lettuce,
    O::Mug,
    O::Newspaper,
    O::Pan,
    O::PaperTowel,
    O::Pen,
    O::Pencil,
    O::PepperShaker,
    O::Plate,
    O::Pot,
    O::Potato,
    O::RemoteControl,
    O::SaltShaker,
    O::SoapBar,
    O::SoapBottle,
    O::Spatula,
    O::Spoon,
    O::SprayBottle,
    O::Statue,
    O::TennisRacket,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Tomato,
    O::Vase,
    O::Watch,
    O::WateringCan,
    O::WineBottle,
    O::HandTowel,
];
const SEAT: &[ObjectClass] = &[
    O::BasketBall,
    O::Book,
    O::Box,
    O::CellPhone,
    O::Cloth,
    O::CreditCard,
    O::KeyChain,
    O::Laptop,
    O::Newspaper,
    O::Pillow,
    O::RemoteControl,
];
const DRESSER: &[ObjectClass] = &[
    O::AlarmClock,
    O::BasketBall,
    O::Book,
    O::Bowl,
    O::Box,
    O::Candle,
    O::Cd,
    O::CellPhone,
    O::Cloth,
    O::CreditCard,
    O::Cup,
    O::GlassBottle,
    O::KeyChain,
    O::Laptop,
    O::Mug,
    O::Newspaper,
    O::Pen,
    O::Pencil,
    O::Plate,
    O::RemoteControl,
    O::SprayBottle,
    O::Statue,
    O::TennisRacket,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Vase,
    O::Watch,
    O::WateringCan,
    O::WineBottle,
];
const DESK: &[ObjectClass] = &[
    O::AlarmClock,
    O::BasketBall,
    O::Book,
    O::Bowl,
    O::Box,
    O::Candle,
    O::Cd,
    O::CellPhone,
    O::Cloth,
    O::CreditCard,
    O::Cup,
    O::GlassBottle,
    O::KeyChain,
    O::Laptop,
    O::Mug,
    O::Newspaper,
    O::Pen,
    O::Pencil,
    O::Plate,
    O::RemoteControl,
    O::SoapBottle,
    O::SprayBottle,
    O::Statue,
    O::TennisRacket,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Vase,
    O::Watch,
    O::WateringCan,
    O::WineBottle,
];
const FRIDGE: &[ObjectClass] = &[
    O::Apple,
    O::Bowl,
    O::Bread,
    O::Cup,
    O::Egg,
    O::GlassBottle,
    O::Lettuce,
    O::Mug,
    O::Pan,
    O::Plate,
    O::Pot,
    O::Potato,
    O::Tomato,
    O::WineBottle,
];
const MICROWAVE: &[ObjectClass] =
    &[O::Apple, O::Bowl, O::Bread, O::Cup, O::Egg, O::GlassBottle, O::Mug, O::Plate, O::Potato, O::Tomato];
const SINK_BASIN: &[ObjectClass] = &[
    O::Apple,
    O::Bowl,
    O::ButterKnife,
    O::Cloth,
    O::Cup,
    O::DishSponge,
    O::Egg,
    O::GlassBottle,
    O::Fork,
    O::Kettle,
    O::Knife,
    O::Ladle,
    O::Lettuce,
    O::Mug,
    O::Pan,
    O::Plate,
    O::Pot,
    O::Potato,
    O::SoapBar,
    O::Spatula,
    O::Spoon,
    O::Tomato,
    O::HandTowel,
];
const CABINET: &[ObjectClass] = &[
    O::Book,
    O::Bowl,
    O::Box,
    O::Candle,
    O::Cd,
    O::Cloth,
    O::Cup,
    O::DishSponge,
    O::GlassBottle,
    O::Kettle,
    O::Ladle,
    O::Mug,
    O::Newspaper,
    O::Pan,
    O::PepperShaker,
    O::Plate,
    O::Plunger,
    O::Pot,
    O::SaltShaker,
    O::SoapBar,
    O::SoapBottle,
    O::SprayBottle,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Vase,
    O::WateringCan,
    O::WineBottle,
    O::HandTowel,
];
const SHELF: &[ObjectClass] = &[
    O::AlarmClock,
    O::Book,
    O::Bowl,
    O::Box,
    O::Candle,
    O::Cd,
    O::CellPhone,
    O::Cloth,
    O::CreditCard,
    O::Cup,
    O::DishSponge,
    O::GlassBottle,
    O::Kettle,
    O::KeyChain,
    O::Mug,
    O::Newspaper,
    O::PaperTowel,
    O::Pen,
    O::Pencil,
    O::PepperShaker,
    O::Plate,
    O::Pot,
    O::RemoteControl,
    O::SaltShaker,
    O::SoapBar,
    O::SoapBottle,
    O::SprayBottle,
    O::Statue,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Vase,
    O::Watch,
    O::WateringCan,
    O::WineBottle,
    O::HandTowel,
];
const DRAWER: &[ObjectClass] = &[
    O::Book,
    O::ButterKnife,
    O::Candle,
    O::Cd,
    O::CellPhone,
    O::Cloth,
    O::CreditCard,
    O::DishSponge,
    O::Fork,
    O::KeyChain,
    O::Knife,
    O::Ladle,
    O::Newspaper,
    O::Pen,
    O::Pencil,
    O::PepperShaker,
    O::RemoteControl,
    O::SaltShaker,
    O::SoapBar,
    O::SoapBottle,
    O::Spatula,
    O::Spoon,
    O::SprayBottle,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Watch,
    O::WateringCan,
    O::HandTowel,
];
const GARBAGE_CAN: &[ObjectClass] = &[
    O::Apple,
    O::Bread,
    O::Cd,
    O::Cloth,
    O::DishSponge,
    O::Egg,
    O::Lettuce,
    O::Newspaper,
    O::PaperTowel,
    O::Pen,
    O::Pencil,
    O::Potato,
    O::SoapBar,
    O::SoapBottle,
    O::SprayBottle,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Tomato,
    O::WineBottle,
    O::HandTowel,
];
const TOILET: &[ObjectClass] = &[
    O::Candle,
    O::Cloth,
    O::DishSponge,
    O::Newspaper,
    O::PaperTowel,
    O::SoapBar,
    O::SoapBottle,
    O::SprayBottle,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::HandTowel,
];
const CART: &[ObjectClass] = &[
    O::Candle,
    O::Cloth,
    O::DishSponge,
    O::Mug,
    O::PaperTowel,
    O::Plunger,
    O::SoapBar,
    O::SoapBottle,
    O::SprayBottle,
    O::Statue,
    O::TissueBox,
    O::ToiletPaper,
    O::ToiletPaperRoll,
    O::Vase,
    O::HandTowel,
];
const BED: &[ObjectClass] =
    &[O::BaseballBat, O::BasketBall, O::Book, O::CellPhone, O::Laptop, O::Newspaper, O::Pillow, O::TennisRacket];
const SAFE: &[ObjectClass] = &[O::Cd, O::CellPhone, O::CreditCard, O::KeyChain, O::Statue, O::Vase, O::Watch];

const fn contents_mask(class: ReceptacleClass) -> ClassMask {
    use ReceptacleClass as R;
    match class {
        R::ArmChair | R::Ottoman | R::Sofa => mask(SEAT),
        R::BathtubBasin => mask(&[O::Cloth, O::DishSponge, O::SoapBar, O::HandTowel]),
        R::Bed => mask(BED),
        R::Cabinet => mask(CABINET),
        R::Cart => mask(CART),
        R::CoffeeMachine => mask(&[O::Mug]),
        R::CoffeeTable | R::CounterTop | R::DiningTable | R::SideTable => mask(TABLE_TOP),
        R::Desk => mask(DESK),
        R::Drawer => mask(DRAWER),
        R::Dresser => mask(DRESSER),
        R::Fridge => mask(FRIDGE),
        R::GarbageCan => mask(GARBAGE_CAN),
        R::HandTowelHolder => mask(&[O::HandTowel]),
        R::LaundryHamper => mask(&[O::Cloth]),
        R::Microwave => mask(MICROWAVE),
        R::Safe => mask(SAFE),
        R::Shelf => mask(SHELF),
        R::SinkBasin => mask(SINK_BASIN),
        R::StoveBurner => mask(&[O::Kettle, O::Pan, O::Pot]),
        // Upstream's toaster holds only sliced bread, which the text world never creates.
        R::Toaster => 0,
        R::Toilet => mask(TOILET),
        R::ToiletPaperHanger => mask(&[O::ToiletPaper, O::ToiletPaperRoll]),
        R::TowelHolder => mask(&[O::Towel]),
        R::TvStand => mask(&[O::TissueBox]),
    }
}

const CONTENTS: [ClassMask; ReceptacleClass::ALL.len()] = {
    let mut table = [0; ReceptacleClass::ALL.len()];
    let mut i = 0;
    while i < ReceptacleClass::ALL.len() {
        table[i] = contents_mask(ReceptacleClass::ALL[i]);
        i += 1;
    }
    table
};

impl ReceptacleClass {
    /// Has a door: fridge, cabinet, microwave, drawer, safe.
    pub const fn openable(self) -> bool {
        matches!(self, Self::Fridge | Self::Cabinet | Self::Microwave | Self::Drawer | Self::Safe)
    }

    /// `canContain`: objects of `object` class may be put here.
    pub const fn can_contain(self, object: ObjectClass) -> bool {
        CONTENTS[self as usize] >> (object as u32) & 1 == 1
    }

    /// Where a lamp may stand (lamps have no `canContain` entry upstream; they stand on
    /// furniture without a door).
    pub const fn hosts_lamps(self) -> bool {
        matches!(self, Self::Desk | Self::SideTable | Self::Dresser | Self::CoffeeTable | Self::Shelf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sorted_and_round_trip() {
        for pair in ObjectClass::ALL.windows(2) {
            assert!(pair[0].name() < pair[1].name(), "{} !< {}", pair[0], pair[1]);
        }
        for pair in ReceptacleClass::ALL.windows(2) {
            assert!(pair[0].name() < pair[1].name(), "{} !< {}", pair[0], pair[1]);
        }
        for &class in ObjectClass::ALL {
            assert_eq!(ObjectClass::from_name(class.name()), Some(class));
            assert_eq!(ObjectClass::ALL[class.index()], class);
        }
        for &class in ReceptacleClass::ALL {
            assert_eq!(ReceptacleClass::from_name(class.name()), Some(class));
        }
        assert!(ObjectClass::ALL.len() <= ClassMask::BITS as usize, "a class mask has a bit per class");
    }

    #[test]
    fn upstream_affordances() {
        assert!(ObjectClass::Apple.heatable() && ObjectClass::Apple.sliceable());
        assert!(!ObjectClass::Lettuce.heatable() && ObjectClass::Lettuce.coolable());
        assert!(ObjectClass::WineBottle.coolable() && !ObjectClass::WineBottle.cleanable());
        assert!(ObjectClass::DeskLamp.toggleable() && !ObjectClass::DeskLamp.pickupable());
        assert!(ObjectClass::Mug.receptacle_object());
        assert!(ReceptacleClass::CoffeeMachine.can_contain(ObjectClass::Mug));
        assert!(!ReceptacleClass::CoffeeMachine.can_contain(ObjectClass::Cup));
        assert!(ReceptacleClass::Fridge.openable() && !ReceptacleClass::CounterTop.openable());
        assert!(!ReceptacleClass::Drawer.can_contain(ObjectClass::Apple));
    }

    #[test]
    fn every_pickupable_class_has_a_home() {
        for &class in ObjectClass::PROCEDURAL.iter().filter(|c| c.pickupable()) {
            assert!(class.usual_receptacles().next().is_some(), "{class} has no receptacle");
        }
        // Upstream's other movables are in no `VAL_RECEPTACLE_OBJECTS` entry: taken, they are never put down.
        for class in [ObjectClass::Boots, ObjectClass::PaperTowelRoll, ObjectClass::ScrubBrush, ObjectClass::TeddyBear]
        {
            assert!(class.pickupable() && !class.procedural(), "{class}");
            assert_eq!(class.usual_receptacles().next(), None, "{class}");
        }
    }

    #[test]
    fn the_vocabulary_holds_upstream_objects_list() {
        // `OBJECTS` of `alfworld/gen/constants.py`, lower-cased: 108 classes, each an object or a receptacle class.
        assert_eq!(ObjectClass::ALL.len() + ReceptacleClass::ALL.len(), 108);
        assert_eq!(ObjectClass::PROCEDURAL.len(), 58);
        assert_eq!(ObjectClass::ALL.iter().filter(|c| !c.procedural()).count(), 21);
        let procedural: Vec<ObjectClass> = ObjectClass::ALL.iter().copied().filter(|c| c.procedural()).collect();
        assert_eq!(procedural, ObjectClass::PROCEDURAL, "in ALL order");
        // Fixtures are objects nothing picks up, uses, heats, cools, cleans, slices or fills.
        for name in ["houseplant", "painting", "television", "window", "lightswitch", "sink", "stoveknob", "mirror"] {
            let class = ObjectClass::from_name(name).unwrap();
            assert!(!class.procedural() && !class.pickupable() && !class.toggleable(), "{class}");
            assert!(!(class.heatable() || class.coolable() || class.cleanable() || class.sliceable()), "{class}");
            assert!(!class.receptacle_object() && class.usual_receptacles().next().is_none(), "{class}");
        }
        // The sink and the bathtub are objects; their basins are the receptacles.
        assert!(ObjectClass::from_name("sink").is_some() && ReceptacleClass::from_name("sink").is_none());
        assert!(ObjectClass::from_name("bathtub").is_some() && ReceptacleClass::from_name("bathtubbasin").is_some());
    }
}
