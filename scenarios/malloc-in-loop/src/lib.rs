//! `malloc-in-loop`: seed 004's mitigation, "pre-allocating and reusing
//! buffers, or using a memory pool allocator", measured. The hot loop needs
//! four temporaries a step. Allocating them with `cudaMalloc` and freeing
//! them with `cudaFree` inside the loop makes every step wait for the device
//! (`cudaFree` synchronises), so the host can never queue work ahead.
//! Reusing buffers allocated once, or taking them from the stream-ordered
//! pool, lets it. All three compute the same result, checked against the
//! CPU; the fixed forms time the broken loop in the same process and must be
//! at least 10× faster. The speed-up itself is in the JSON report.

use casebook_model::{
    Claim, ClaimVerdict, Control, Outcome, Reach, Requirement, Scenario, Source, Symptom, Variant,
};

casebook_model::names_module!();

casebook_model::cpp_variants! {
    "cpp/malloc_in_loop.cu" {
        broken: casebook_malloc_in_loop_broken_cpp,
        fixed: casebook_malloc_in_loop_fixed_cpp,
        pool: casebook_malloc_in_loop_pool_cpp,
    }
}

pub fn scenario() -> Scenario {
    Scenario {
        slug: "malloc-in-loop",
        title: "GPU code slow, the device mostly idle (cudaMalloc and cudaFree in the hot loop)",
        cause: "cudaFree waits for the device to finish all its work, so allocating and freeing inside \
                the loop serialises host and device. Allocate once and reuse, or use the stream-ordered \
                pool (cudaMallocAsync/cudaFreeAsync).",
        fix: "Allocate the loop's temporaries once before the loop and reuse them every step, or take \
              them from the stream-ordered pool (cudaMallocAsync/cudaFreeAsync) with its release \
              threshold raised.",
        symptoms: &["slow, GPU idle"],
        requires: Requirement::GPU_ALONE,
        reports: &[],
        claims: CLAIMS,
        variants: vec![
            Variant::broken("broken-cpp", Symptom::check_failed(WAITS), cpp::broken),
            Variant::fixed("fixed-cpp", cpp::fixed),
            Variant::fixed("pool-cpp", cpp::pool),
        ],
    }
}

/// Confirmed when the fix is at least 10× faster with the same result.
fn faster(o: &Outcome) -> ClaimVerdict {
    match (
        o.measure(SPEEDUP_OVER_BROKEN),
        o.check(OUTPUT_EQUALS_THE_CPU_S),
    ) {
        (Some(x), Some(true)) if x >= 10.0 => ClaimVerdict::Confirmed,
        (Some(x), Some(true)) if x > 1.0 => ClaimVerdict::Partly,
        (Some(_), Some(true)) => ClaimVerdict::Refuted,
        _ => ClaimVerdict::Undecided,
    }
}

const CLAIMS: &[Claim] = &[Claim {
    id: "004-caching-reduces-overhead",
    source: Source::Seed("004_dd8d91b458147886.txt"),
    quote: "This behavior is performance-driven, aiming to reduce the overhead of interacting with the GPU's memory management unit.",
    judged_by: "pool-cpp",
    control: Control::Pending,
    reach: Reach::Either,
    // Cached blocks from the stream-ordered pool, against cudaMalloc and
    // cudaFree each step: at least ten times faster confirms it.
    judge: faster,
}];
