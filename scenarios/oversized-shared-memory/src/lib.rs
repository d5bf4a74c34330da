//! `oversized-shared-memory`: seed 004's example 2, which the article offers
//! as a source of fragmentation. It launches its kernel with `size *
//! sizeof(float)` = 4 MiB of dynamic shared memory per block; no GPU gives a
//! block that much, so the launch fails, and the program never asks. Its
//! output holds whatever was there; its `cudaMemset(input, 1.0f, …)` writes
//! the byte 0x01, not the float 1.0. The fix fills floats as floats, opts the
//! kernel in to the GPU's maximum dynamic shared memory, tiles the loop to
//! fit, and checks the launch.

use casebook_model::{Claim, ClaimVerdict, Outcome, Requirement, Scenario, Symptom, Variant};

casebook_model::names_module!();

casebook_model::cpp_variants! {
    "cpp/oversized_shared_memory.cu" {
        broken: casebook_oversized_shared_memory_broken_cpp,
        fixed: casebook_oversized_shared_memory_fixed_cpp,
    }
}

const INVALID: &str = "cudaErrorInvalidValue";

pub fn scenario() -> Scenario {
    Scenario {
        slug: "oversized-shared-memory",
        title: "Kernel output is garbage, no error (a launch asked for more shared memory than a block has)",
        cause: "A launch whose dynamic shared memory exceeds the block's limit fails with \
                cudaErrorInvalidValue and runs nothing; unchecked, the program goes on with stale output. \
                Check every launch, opt in with cudaFuncSetAttribute, and tile to fit.",
        symptoms: &["wrong results, no error"],
        requires: Requirement::GPU,
        claims: CLAIMS,
        variants: vec![
            Variant::broken("broken-cpp", Symptom::cuda_error(INVALID), cpp::broken)
                .then_shows(Symptom::check_failed(OUTPUT_HOLDS_INPUT_2_1)),
            Variant::fixed("fixed-cpp", cpp::fixed),
        ],
    }
}

const CLAIMS: &[Claim] = &[Claim {
    id: "004-shared-memory-fragments",
    seed: "004_dd8d91b458147886.txt",
    quote: "The `extern __shared__ float shared[];` declaration requests memory from shared memory which is allocated for \
            each thread block and might lead to fragmentation if kernels use different sizes and are not controlled by the user.",
    judged_by: "broken-cpp",
    // Shared memory is on-chip and per block: the article's own test, its
    // large allocation after the kernel, says whether device memory fragments.
    judge: |o: &Outcome| match o.flag(THE_LARGE_ALLOCATION_AFTER_THE_KERNEL_SUCCEEDS) {
        Some(true) => ClaimVerdict::Refuted,
        _ if o.shows(&Symptom::cuda_error("cudaErrorMemoryAllocation")) => ClaimVerdict::Confirmed,
        _ => ClaimVerdict::Undecided,
    },
}];
