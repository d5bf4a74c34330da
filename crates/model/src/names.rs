//! The vocabulary: every check, fact, measure and series name a variant
//! records and a judge or the cookbook reads, declared once.
//!
//! A scenario declares its names in `src/names.rs` with [`vocabulary!`]. Its
//! Rust code uses the typed constants this makes, so a misspelt name does not
//! compile; its build script includes the same file through
//! `casebook_build::vocabulary!` and writes the C++ header `names.h`, so the
//! C++ variants record exactly the same names, with the same units.

use crate::Unit;

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

/// In a scenario's `lib.rs`: the module `names`, from `src/names.rs`, with
/// its names re-exported at the crate's root.
#[macro_export]
macro_rules! names_module {
    () => {
        /// The names this scenario's variants record (`src/names.rs`).
        pub mod names {
            use $crate::vocabulary;
            include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/names.rs"));
        }
        pub use names::*;
    };
}

/// In a scenario's `lib.rs`: the module `cpp`, declaring the `extern "C"`
/// entry points of its C++ variants (compiled from `cpp/` by its build script).
#[macro_export]
macro_rules! cpp_variants {
    ($($f:ident),* $(,)?) => {
        /// The C++ variants of `cpp/`, compiled by the build script.
        mod cpp {
            unsafe extern "C" {
                $( pub fn $f(rec: *const $crate::CRecorder) -> i32; )*
            }
        }
    };
}

/// Names every scenario may record: declared here once, and written into
/// every scenario's C++ header too (see `kernels/build`).
pub mod global {
    include!("global_names.rs");
}
