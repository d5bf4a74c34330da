//! The vocabulary: every check, fact, measure and series name a variant
//! records and a judge or the cookbook reads, declared once.
//!
//! A scenario declares its names in `names.toml`, in its folder. Its build
//! script (`casebook_build`) turns that file into Rust in the grammar of
//! [`vocabulary!`], which [`names_module!`] includes, and into the C++ header
//! `names.h`. The Rust code uses the typed constants this makes, so a misspelt
//! name does not compile, and the C++ variants record exactly the same names,
//! with the same units; the Python variants read the same file.

use serde::{Deserialize, Serialize};

/// What a measure or a series' axis counts in: data, so that every
/// figure carries its unit to the report and the plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Bytes,
    Count,
    Seconds,
    /// A fraction of a whole: 0.25 is a quarter.
    Ratio,
    /// How many times one figure is another: 21 is 21×.
    Factor,
}

impl Unit {
    /// The number the C recorder ABI passes for this unit (`casebook.h`).
    pub const fn code(self) -> i32 {
        match self {
            Unit::Bytes => 0,
            Unit::Count => 1,
            Unit::Seconds => 2,
            Unit::Ratio => 3,
            Unit::Factor => 4,
        }
    }

    pub fn from_code(code: i32) -> Option<Unit> {
        [
            Unit::Bytes,
            Unit::Count,
            Unit::Seconds,
            Unit::Ratio,
            Unit::Factor,
        ]
        .into_iter()
        .find(|u| u.code() == code)
    }

    /// The name used in C++ (`casebook::Bytes`) and in this enum.
    pub const fn name(self) -> &'static str {
        match self {
            Unit::Bytes => "Bytes",
            Unit::Count => "Count",
            Unit::Seconds => "Seconds",
            Unit::Ratio => "Ratio",
            Unit::Factor => "Factor",
        }
    }
}

/// A yes/no question a variant answers; a false answer is a symptom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CheckName(pub &'static str);

/// A hardware-independent observation: it goes into the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FactName(pub &'static str);

/// A raw figure, with its unit: it goes to the JSON report only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MeasureName {
    pub key: &'static str,
    pub unit: Unit,
}

/// A series of points to plot: what x counts, and the units of both axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeriesName {
    pub key: &'static str,
    /// What the x axis counts: "call", "temporaries freed", …
    pub x_label: &'static str,
    pub x_unit: Unit,
    pub y_unit: Unit,
}

/// One entry of a vocabulary, for the tests and the cookbook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    Check(CheckName),
    Fact(FactName),
    Measure(MeasureName),
    Series(SeriesName),
}

/// Declares a vocabulary: one typed constant per name, and `VOCABULARY`
/// listing them all.
///
/// ```
/// use casebook_model::vocabulary;
/// vocabulary! {
///     /// The reader copied what it was given.
///     check READER_OK = "reader sees the values it was given";
///     fact REUSED = "the next allocation reuses the freed block";
///     measure CORRUPTED = "corrupted_reads" in Count;
///     series FREE = "free_bytes" per "call" in Bytes;
/// }
/// assert_eq!(READER_OK.0, "reader sees the values it was given");
/// assert_eq!(VOCABULARY.len(), 4);
/// ```
#[macro_export]
macro_rules! vocabulary {
    ($($(#[$doc:meta])* $kind:ident $name:ident = $text:literal $(per $x:literal)? $(in $unit:ident)?;)*) => {
        $( $crate::vocabulary!(@one $(#[$doc])* $kind $name = $text $(per $x)? $(in $unit)?); )*
        /// Every name declared here.
        #[allow(dead_code)]
        pub const VOCABULARY: &[$crate::Name] = &[
            $( $crate::vocabulary!(@entry $kind $name), )*
        ];
    };
    (@one $(#[$doc:meta])* check $name:ident = $text:literal) => {
        $(#[$doc])* pub const $name: $crate::CheckName = $crate::CheckName($text);
    };
    (@one $(#[$doc:meta])* fact $name:ident = $text:literal) => {
        $(#[$doc])* pub const $name: $crate::FactName = $crate::FactName($text);
    };
    (@one $(#[$doc:meta])* measure $name:ident = $text:literal in $unit:ident) => {
        $(#[$doc])* pub const $name: $crate::MeasureName =
            $crate::MeasureName { key: $text, unit: $crate::Unit::$unit };
    };
    (@one $(#[$doc:meta])* series $name:ident = $text:literal per $x:literal in $unit:ident) => {
        $(#[$doc])* pub const $name: $crate::SeriesName = $crate::SeriesName {
            key: $text,
            x_label: $x,
            x_unit: $crate::Unit::Count,
            y_unit: $crate::Unit::$unit,
        };
    };
    (@entry check $name:ident) => { $crate::Name::Check($name) };
    (@entry fact $name:ident) => { $crate::Name::Fact($name) };
    (@entry measure $name:ident) => { $crate::Name::Measure($name) };
    (@entry series $name:ident) => { $crate::Name::Series($name) };
}

/// In a scenario's `lib.rs`: the module `names`, generated from its
/// `names.toml` by its build script, with its names re-exported at the
/// crate's root.
#[macro_export]
macro_rules! names_module {
    () => {
        /// The names this scenario's variants record (`names.toml`).
        pub mod names {
            use $crate::vocabulary;
            include!(concat!(env!("OUT_DIR"), "/names.rs"));
        }
        pub use names::*;
    };
}

/// In a scenario's `lib.rs`: the modules its build script makes of its
/// folder. `names` (see [`names_module!`](crate::names_module)); where
/// `cpp/` holds C++ variants, `cpp` (see [`cpp_variants!`](crate::cpp_variants)),
/// listing each entry point a file defines (`casebook_<slug>_<anchor>_cpp`)
/// by its anchor, or the file whole where it marks no anchors; where
/// `device/` holds kernels, `fatbin`, one `&[u8]` constant for each file
/// (`fatbin::SCALE` for `device/scale.cu`). An entry point's name is written
/// once, in its C++.
#[macro_export]
macro_rules! case_modules {
    () => {
        include!(concat!(env!("OUT_DIR"), "/case.rs"));
    };
}

/// In a scenario's `lib.rs`: `pub fn scenario() -> Scenario`, the case as
/// the catalogue lists it, from what it declares. Its slug is its folder's
/// (the build script passes it), its claims are its `CLAIMS` unless it
/// names others, and `reports` is left out where it reproduces none:
///
/// ```ignore
/// casebook_model::scenario!(Scenario {
///     title: "…",
///     cause: "…",
///     fix: "…",
///     symptoms: &["out of memory"],
///     requires: Requirement::GPU,
///     reports: REPORTS,
///     variants: variants![cudarc_pair!(Symptom::check_failed(BACK))],
/// });
/// ```
#[macro_export]
macro_rules! scenario {
    (Scenario {
        title: $title:expr,
        cause: $cause:expr,
        fix: $fix:expr,
        symptoms: $symptoms:expr,
        requires: $requires:expr,
        $(reports: $reports:expr,)?
        $(claims: $claims:expr,)?
        variants: $variants:expr $(,)?
    }) => {
        /// This case, as the catalogue lists it.
        pub fn scenario() -> $crate::Scenario {
            $crate::Scenario {
                slug: env!("CASEBOOK_SLUG"),
                title: $title,
                cause: $cause,
                fix: $fix,
                symptoms: $symptoms,
                requires: $requires,
                reports: $crate::scenario!(@or [$($reports)?] &[]),
                claims: $crate::scenario!(@or [$($claims)?] CLAIMS),
                variants: $variants,
            }
        }
    };
    (@or [] $default:expr) => {
        $default
    };
    (@or [$given:expr] $default:expr) => {
        $given
    };
}

/// The module `cpp`, declaring the `extern "C"` entry points of a
/// scenario's C++ variants (compiled from `cpp/` by its build script), and
/// one [`Program`](crate::Program) for each, named after its anchor in the
/// file. The build script writes it from the entry points it finds (see
/// [`case_modules!`](crate::case_modules)), as:
///
/// ```ignore
/// casebook_model::cpp_variants! {
///     "cpp/missing_free.cu" { broken, fixed }
///     "cpp/probes.cu" (whole file) { probe }
/// }
/// // Variant::broken("broken-cpp", symptom, cpp::broken)
/// ```
///
/// `cpp::broken` is the code between `// ANCHOR: broken` and
/// `// ANCHOR_END: broken`; under `(whole file)`, the whole file. Its entry
/// point is `casebook_<slug>_broken_cpp` (the build script gives the crate
/// the prefix): a variant's anchor and its C++ function share its name.
#[macro_export]
macro_rules! cpp_variants {
    ($($file:literal $(($whole:ident file))? { $($anchor:ident),* $(,)? })*) => {
        /// The C++ variants of `cpp/`, compiled by the build script.
        #[allow(non_upper_case_globals)]
        mod cpp {
            /// The entry points, as the C++ defines them.
            mod entry {
                unsafe extern "C" {
                    $($( $crate::cpp_variants!(@entry $anchor); )*)*
                }
            }
            $( $crate::cpp_variants!(@group $file [$($whole)?] $($anchor)*); )*
        }
    };
    (@entry $anchor:ident) => {
        #[link_name = concat!(env!("CASEBOOK_SYMBOL_PREFIX"), stringify!($anchor), "_cpp")]
        pub fn $anchor(rec: *const $crate::CRecorder) -> i32;
    };
    (@group $file:literal $mode:tt $($anchor:ident)*) => {
        $(
            pub const $anchor: $crate::Program =
                $crate::Program::cpp(entry::$anchor, $file, $crate::cpp_variants!(@anchor $mode $anchor));
        )*
    };
    (@anchor [] $anchor:ident) => { Some(stringify!($anchor)) };
    (@anchor [whole] $anchor:ident) => { None };
}

/// A Rust variant through cudarc, in the scenario's `src/<module>.rs`:
/// `cudarc!(broken)` runs `broken::run` and shows the whole of
/// `src/broken.rs`; `cudarc!(fixed::primary)` runs `fixed::primary`, and
/// `cudarc!(fixed::destroy at "region")` shows only the lines between
/// `// ANCHOR: region` and `// ANCHOR_END: region`. Where the anchor is
/// named after the function, as the C++ variants' anchors are,
/// `cudarc!(fixed::destroy, anchored)` says so without writing the name
/// twice: the lines between `// ANCHOR: destroy` and `// ANCHOR_END: destroy`.
#[macro_export]
macro_rules! cudarc {
    ($module:ident) => {
        $crate::cudarc!($module::run)
    };
    ($module:ident :: $f:ident, anchored) => {
        $crate::cudarc!($module::$f at (stringify!($f)))
    };
    ($module:ident :: $f:ident) => {
        $crate::Program::cudarc(
            $module::$f,
            $crate::Code {
                file: concat!("src/", stringify!($module), ".rs"),
                anchor: None,
            },
        )
    };
    ($module:ident :: $f:ident at $anchor:expr) => {
        $crate::Program::cudarc(
            $module::$f,
            $crate::Code {
                file: concat!("src/", stringify!($module), ".rs"),
                anchor: Some($anchor),
            },
        )
    };
}

/// The case's broken program and its fix through cudarc, as every case
/// names them: `src/broken.rs` and `src/fixed.rs`, each its `run`.
/// `cudarc_pair!(symptom)` is `Pair::new(symptom, cudarc!(broken),
/// cudarc!(fixed))`.
#[macro_export]
macro_rules! cudarc_pair {
    ($symptom:expr) => {
        $crate::Pair::new($symptom, $crate::cudarc!(broken), $crate::cudarc!(fixed))
    };
}

/// The case's broken program and its fix in C++, the anchors `broken` and
/// `fixed` of its [`cpp_variants!`](crate::cpp_variants): `cpp_pair!(symptom)`
/// is `Pair::new(symptom, cpp::broken, cpp::fixed)`.
#[macro_export]
macro_rules! cpp_pair {
    ($symptom:expr) => {
        $crate::Pair::new($symptom, cpp::broken, cpp::fixed)
    };
}

/// Names every scenario may record: declared here once, and written into
/// every scenario's C++ header too (see `kernels/build`).
pub mod global {
    include!("global_names.rs");
}
