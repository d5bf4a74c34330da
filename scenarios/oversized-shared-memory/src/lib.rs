//! `oversized-shared-memory`: seed 004's example 2, which the article offers
//! as a source of fragmentation. It launches its kernel with `size *
//! sizeof(float)` = 4 MiB of dynamic shared memory per block; no GPU gives a
//! block that much, so the launch fails, and the program never asks. Its
//! output holds whatever was there; its `cudaMemset(input, 1.0f, …)` writes
//! the byte 0x01, not the float 1.0. The fix fills floats as floats, opts the
//! kernel in to the GPU's maximum dynamic shared memory, tiles the loop to
//! fit, and checks the launch.

use casebook_model::cuda_errors::runtime;
use casebook_model::prelude::*;
use casebook_model::pytorch;

casebook_model::case_modules!();

const TRITON: &str = "python/triton_matmul.py";

casebook_model::scenario!(Scenario {
    title: "A launch asks for more shared memory than a block has: garbage output with no error \
            (CUDA C++), or Triton's OutOfResources: out of resource: shared memory",
    cause: "A launch whose dynamic shared memory exceeds the block's limit fails with \
            cudaErrorInvalidValue and runs nothing; unchecked, the program goes on with stale output. \
            Check every launch, opt in with cudaFuncSetAttribute, and tile to fit.",
    fix: "Read cudaDevAttrMaxSharedMemoryPerBlockOptin, opt the kernel in with \
          cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize), tile the data so each \
          block's shared buffer fits, and check every launch with cudaGetLastError; in Triton, \
          size the tiles and num_stages from the device's max_shared_mem.",
    symptoms: &["wrong results, no error", "out of resource: shared memory"],
    requires: Requirement::GPU,
    variants: variants![
        cpp_pair!(Symptom::cuda_error(runtime::INVALID_VALUE))
            .then_shows(Symptom::check_failed(OUTPUT_HOLDS_INPUT_2_1)),
        Variant::contrast_clean("fits-cpp", cpp::fits).one_change(
            "broken-cpp",
            "the article's `size`: 1024 * 1024 floats there, a 4 MiB buffer no block can have; \
             8 * 1024 here, 32 KiB, within what a block has without opting in",
            "int size = 1024 * 1024;",
            "int size = 8 * 1024;",
        ),
        Variant::broken(
            "triton-py",
            Symptom::cuda_error(pytorch::TRITON_OUT_OF_RESOURCES),
            Program::pytorch(TRITON, "broken"),
        )
        .then_shows(Symptom::check_failed(PRODUCT_IS_RIGHT))
        .also_differs(
            "a Triton matmul, not the article's kernel: Triton keeps each pipeline stage's \
             tiles in shared memory and checks the block's limit at the launch, which the \
             article's unchecked launch does not.",
        ),
        Variant::fixed("triton-fixed-py", Program::pytorch(TRITON, "fixed")),
        Variant::contrast_clean("varying-sizes-cpp", cpp::varying_sizes)
            .alone()
            .states(
                "Launches with dynamic shared buffers of every size up to the \
                 most a block may have leave device memory as it was.",
                |o| o.flag(FREE_MEMORY_IS_UNCHANGED_BY_THE_LAUNCHES),
                |o| Outcome::yes_no(
                    "one block of nearly all free memory served after them",
                    o.flag(ONE_BLOCK_OF_NEARLY_ALL_FREE_MEMORY_IS_SERVED_AFTER_THEM)
                ),
            ),
    ],
});

/// Why the claims that shared buffers fragment device memory have no
/// control run.
const SHARED_MEMORY_IS_ON_CHIP: &str = "shared memory is each multiprocessor's on-chip storage, \
                                        given to a block when it starts and taken back when it ends; it is no part of device memory, \
                                        so no size or order of launches can leave device memory fragmented through it, and a run that \
                                        reads \"confirmed\" would need launches that take device memory, another claim. What shows \
                                        that the reading sees what a launch takes from device memory: in device-heap-exhaustion's \
                                        `grid-size-cpp`, the same reading (free memory before and after the launches) finds the 140 \
                                        MiB the first launch of a kernel with local memory reserves.";

/// Launches with varying shared buffers: "refuted" if device memory is as it
/// was and a block of nearly all of it is served after them.
fn shared_buffers_verdict(o: &Outcome) -> ClaimVerdict {
    match (
        o.flag(EVERY_LAUNCH_RAN),
        o.flag(FREE_MEMORY_IS_UNCHANGED_BY_THE_LAUNCHES),
        o.flag(ONE_BLOCK_OF_NEARLY_ALL_FREE_MEMORY_IS_SERVED_AFTER_THEM),
    ) {
        (Some(true), Some(true), Some(true)) => ClaimVerdict::Refuted,
        (Some(true), Some(false), _) | (Some(true), _, Some(false)) => ClaimVerdict::Confirmed,
        _ => ClaimVerdict::Undecided,
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "004-shared-memory-fragments",
        source: Source::SEED_004,
        quote: "The `extern __shared__ float shared[];` declaration requests memory from shared memory which is allocated for \
                each thread block and might lead to fragmentation if kernels use different sizes and are not controlled by the user.",
        judged_by: "varying-sizes-cpp",
        control: Control::Impossible(SHARED_MEMORY_IS_ON_CHIP),
        // Shared memory is on-chip and per block. Launches of every size that
        // do run: does device memory shrink, or a large block fail after them?
        judge: shared_buffers_verdict,
        ..Claim::EITHER
    },
    Claim {
        id: "004-shared-buffers-across-launches-fragment",
        source: Source::SEED_004,
        quote: "The cumulative effect of these buffers, especially across multiple kernel launches, can result in a fragmented memory space.",
        judged_by: "varying-sizes-cpp",
        control: Control::Impossible(SHARED_MEMORY_IS_ON_CHIP),
        judge: shared_buffers_verdict,
        ..Claim::EITHER
    },
    Claim {
        id: "004-example2-kernel-uses-shared-buffer",
        source: Source::SEED_004,
        quote: "This example demonstrates a kernel using shared memory as an intermediate buffer.",
        judged_by: "broken-cpp",
        control: Control::Run("fits-cpp"),
        // The sentence describes the kernel, which is written to stage its
        // input in shared memory; the example as printed asks for 4 MiB per
        // block. Its launch runs the kernel and the output is right:
        // confirmed; it runs and the output is wrong: refuted, the kernel
        // does not do what the sentence says. The launch is refused and the
        // kernel never runs: partly, the kernel is what the sentence says,
        // and the example demonstrates nothing. fits-cpp, the same kernel
        // with a buffer that fits, is the control.
        judge: |o: &Outcome| match (o.first_error().is_some(), o.check(OUTPUT_HOLDS_INPUT_2_1)) {
            (false, Some(true)) => ClaimVerdict::Confirmed,
            (false, Some(false)) => ClaimVerdict::Refuted,
            (true, Some(false)) => ClaimVerdict::Partly,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];
