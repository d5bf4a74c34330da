//! The figures each cell of the fleet matrix carries. Written by
//! `cargo xtask docs` from the cases' `Cargo.toml`s (`key-figures` in
//! `[package.metadata.casebook]`), by case name: edit those, never this file.

/// (scenario, variant, measure, what it is).
#[rustfmt::skip]
pub const KEY_FIGURES: &[(&str, &str, &str, &str)] = &[
    ("context-leak", "broken", "bytes_per_context", "device memory per context"),
    ("context-leak", "broken", "calls_completed", "contexts before the driver refuses one"),
    ("device-heap-exhaustion", "broken", "heap_limit_before", "default device heap"),
    ("library-handle-leak", "broken", "bytes_per_handle", "device memory per cuBLAS handle"),
    ("malloc-in-loop", "fixed-cpp", "speedup_over_broken", "speed-up of allocating once over allocating each step"),
    ("malloc-in-loop", "pool-cpp", "speedup_over_broken", "speed-up of a stream-ordered pool over allocating each step"),
];
