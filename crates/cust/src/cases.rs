//! The cases with cust variants (a `cust.rs` in their folder), compiled
//! here, where cust is linked, and nowhere else. Written by
//! `cargo xtask docs`: edit the folders, never this file.

use casebook_model::VariantFn;

#[path = "../../../scenarios/async-free-race/cust.rs"]
mod async_free_race;
#[path = "../../../scenarios/context-leak/cust.rs"]
mod context_leak;
#[path = "../../../scenarios/missing-free/cust.rs"]
mod missing_free;
#[path = "../../../scenarios/unsynced-stream/cust.rs"]
mod unsynced_stream;

/// Every case with cust variants, in catalogue order, and its table.
#[rustfmt::skip]
pub const SCENARIOS: &[(&str, &[(&str, VariantFn)])] = &[
    ("missing-free", missing_free::VARIANTS),
    ("unsynced-stream", unsynced_stream::VARIANTS),
    ("async-free-race", async_free_race::VARIANTS),
    ("context-leak", context_leak::VARIANTS),
];
