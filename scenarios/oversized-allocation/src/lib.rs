//! `oversized-allocation`: one allocation larger than the free memory fails
//! with CUDA_ERROR_OUT_OF_MEMORY, whatever the batch size; the context stays
//! usable. The fix asks how much is free and processes the data in tiles
//! that fit, with the same result as the CPU.
//!
//! To make "larger than free" the same on every GPU, a ballast (the model's
//! weights) leaves 1 GiB free; the batch is 2 GiB.

use std::sync::Arc;

use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_driver::prelude::*;
use casebook_kernels::fatbin;
use casebook_model::cuda_errors::{driver, runtime};
use casebook_model::pytorch;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, result};

mod broken;
mod fixed;

casebook_model::case_modules!();

pub const DATA_BYTES: usize = 2 << 30;
pub const LEFT_FREE: usize = 1 << 30;
/// The reduced form for the sanitizer, where every kernel is instrumented,
/// divides both by this.
const SANITIZER_DIVISOR: usize = 8;

/// `1 GiB`, `128 MiB`.
fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 30 {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}
const PYTHON: &str = "python/one_batch.py";

casebook_model::scenario!(Scenario {
    title: "CUDA out of memory with batch size 1 (one allocation larger than the free memory)",
    cause: "A single allocation larger than the free memory fails, however small the batch count; \
            the failure is clean and the context stays usable. Ask cudaMemGetInfo and work in tiles.",
    fix: "Query free memory (cudaMemGetInfo), allocate one tile that fits (half the free memory), \
          and stream the batch through it tile by tile instead of allocating it whole. In a \
          framework the same is a smaller batch, or the batch in chunks; a job whose one tensor \
          is larger than the GPU needs a larger GPU or its work split across several.",
    symptoms: &["out of memory", "out of memory with batch size 1"],
    requires: Requirement::GPU_FILLED,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::OUT_OF_MEMORY)),
        Variant::as_written("as-written-cpp", cpp::as_written).also_differs(
            "added to the article's program: its two calls' results kept \
             for the record (g_malloc =, g_free =); it runs twice, on the \
             whole GPU and beside a ballast that leaves 2 GiB free, and \
             there a 64 MiB allocation and memset stand for its \"further \
             operations\".",
        ),
        cpp_pair!(Symptom::cuda_error(runtime::MEMORY_ALLOCATION)),
        Variant::as_written("room-for-it-cpp", cpp::room_for_it)
            .also_differs(
                "added to the article's program, as in as-written-cpp: its \
                 two calls' results kept for the record, and the further \
                 operation beside the ballast.",
            )
            .one_change(
                "as-written-cpp",
                "the free memory the ballast leaves: 2 GiB there, less than \
                 the article's 4 GiB request; 8 GiB here, room for it",
                "return as_written(r, size_t(2) << 30);",
                "return as_written(r, size_t(8) << 30);",
            ),
        Pair::pytorch(PYTHON, Symptom::cuda_error(pytorch::OUT_OF_MEMORY))
            .then_shows(Symptom::check_failed(MATCHES))
            .with_broken(|v| v.also_differs(
                "one tensor twice the GPU's total memory, with no ballast: \
                 the request is larger than the \"total capacity\" the \
                 message gives, as in the reports users paste.",
            ))
            .with_fixed(|v| v.small_when_reduced().also_differs(
                "the same data streamed through one tile of half the free \
                 memory, counted on the GPU.",
            )),
        // Seed 003's large-scale image processing: one image, batch
        // size 1, one training step of a segmentation network.
        Variant::broken(
            "large-image-py",
            Symptom::cuda_error(pytorch::OUT_OF_MEMORY),
            Program::pytorch(PYTHON, "large_image"),
        )
        .then_shows(Symptom::check_failed(THE_STEP_RUNS)),
        Variant::fixed("tiled-image-py", Program::pytorch(PYTHON, "tiled_image")).one_change(
            "large-image-py",
            "how much of the image each training step takes: all of it (8192 pixels a side) \
             there; here one 2048-pixel tile, a step for each of the 16, their gradients summed",
            "_one_image(rec, tile=None)",
            "_one_image(rec, tile=TILE_SIDE)",
        ),
    ],
});

pub(crate) struct Setup {
    pub weights: cudarc::driver::sys::CUdeviceptr,
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub scale: CudaFunction,
    pub input: Vec<f32>,
    /// The batch's size in bytes.
    pub data_bytes: usize,
}

/// The model's weights take all but LEFT_FREE of the device; the batch is
/// DATA_BYTES of floats on the host (an eighth of each under the sanitizer).
pub(crate) fn setup(rec: &mut Recorder) -> anyhow::Result<Setup> {
    let ctx = device::context(rec)?;
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, "scale")?;
    let divisor = casebook_model::normal_or_reduced(rec, 1, SANITIZER_DIVISOR);
    let (data_bytes, left_free) = (DATA_BYTES / divisor, LEFT_FREE / divisor);
    let free = device::free_bytes(rec, &ctx)?;
    let ballast = (free - left_free) / PAGE * PAGE;
    let weights = rec.step("cuMemAlloc (the model's weights)", unsafe {
        result::malloc_sync(ballast)
    })?;
    let left = device::free_bytes(rec, &ctx)?;
    measure_bytes(rec, FREE_FOR_THE_BATCH, left);
    rec.fact(FREE_MEMORY_LEFT_FOR_THE_BATCH, size_text(left_free));
    rec.fact(BATCH_SIZE, size_text(data_bytes));
    let input = (0..data_bytes / 4).map(|i| (i % 4096) as f32).collect();
    Ok(Setup {
        data_bytes,
        weights,
        stream: ctx.default_stream(),
        ctx,
        scale,
        input,
    })
}

impl Setup {
    /// Frees the model's weights: the program ends with nothing allocated.
    pub fn release(self, rec: &mut Recorder) -> anyhow::Result<()> {
        rec.step("cuMemFree (the model's weights)", unsafe {
            result::free_sync(self.weights)
        })?;
        Ok(())
    }
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "003-bs1-footprint-exceeds-memory",
        source: Source::SEED_003,
        quote: "Even with a single input, the necessary memory space for these additional components \
                can easily exceed the available GPU memory.",
        judged_by: "large-image-py",
        control: Control::Run("tiled-image-py"),
        // The components are the article's list before the sentence: the
        // intermediate results, weights and activation maps beside the one
        // image. The step at batch size 1 runs out of memory while the image
        // itself is under 1 GiB: they exceed the GPU (confirmed). The step
        // runs: they fit (refuted; tiled-image-py, the same image a tile a
        // step, is the control).
        judge: |o: &Outcome| match (
            o.flag(THE_STEP_RUNS_OUT_OF_MEMORY),
            o.flag(THE_IMAGE_IS_UNDER_ONE_GIB),
            o.check(THE_STEP_RUNS),
        ) {
            (Some(true), Some(true), _) => ClaimVerdict::Confirmed,
            (Some(false), _, Some(true)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "003-huge-allocation-never-reaches-next-line",
        source: Source::SEED_003,
        quote: "// ... further operations that would never be reached due to insufficient memory.",
        judged_by: "as-written-cpp",
        control: Control::Impossible(
            "a cudaMalloc that fails returns an error code and leaves the program's control flow alone: in C++ that does not check it, the next line always runs. A run in which the further operations are never reached would have to return or throw before them, which skips the step measured. (Where the failure raises, as in PyTorch, the next line is not reached: broken-py.)",
        ),
        // Under its condition, 2 GiB free: after the failed allocation, does
        // a further operation run?
        judge: |o: &Outcome| {
            ClaimVerdict::refuted_if(o.flag(A_FURTHER_OPERATION_RUNS_AFTER_THE_FAILED_ALLOCATION))
        },
        ..Claim::EITHER
    },
    Claim {
        id: "003-one-allocation-exhausts",
        source: Source::SEED_003,
        quote: "While the batch size is 1, the sheer size of the intended allocation can exhaust the available GPU memory.",
        // The article's own program: its one 4 GiB allocation beside a
        // ballast that leaves 2 GiB free, where "can" could. Refused:
        // confirmed; served: refuted. The control, room-for-it-cpp, changes
        // one thing, the free memory the ballast leaves (8 GiB), and the same
        // request is served.
        judged_by: "as-written-cpp",
        control: Control::Run("room-for-it-cpp"),
        judge: |o: &Outcome| ClaimVerdict::refuted_if(o.flag(IT_SUCCEEDS_BESIDE_THE_BALLAST)),
        ..Claim::EITHER
    },
    Claim {
        id: "003-insufficient-memory-line-errors",
        source: Source::SEED_003,
        quote: "// If your GPU doesn't have enough memory this line will generate error",
        judged_by: "as-written-cpp",
        // The same program with room for its 4 GiB: the ballast leaves
        // 8 GiB.
        control: Control::Run("room-for-it-cpp"),
        // "This line" is read as the cudaMalloc the comment follows, the
        // only line of the example that asks for memory (the commentary
        // speaks only of "the allocation attempt"): the cudaFree the
        // comment sits above frees whatever that call left in d_data, and
        // returned cudaSuccess beside the ballast (the run reads it, and the
        // page shows it). Beside a ballast that leaves 2 GiB, the article's
        // 4 GiB cudaMalloc is refused (confirmed) or served (refuted).
        judge: |o: &Outcome| ClaimVerdict::refuted_if(o.flag(IT_SUCCEEDS_BESIDE_THE_BALLAST)),
        ..Claim::EITHER
    },
    Claim {
        id: "003-worse-on-limited-vram",
        source: Source::SEED_003,
        quote: "This is more pronounced on GPUs with limited VRAM.",
        judged_by: "as-written-cpp",
        control: Control::Run("room-for-it-cpp"),
        // The same program on the whole GPU and beside a ballast that
        // leaves 2 GiB free.
        judge: |o: &Outcome| match (
            o.flag(THE_ARTICLE_S_4_GIB_ALLOCATION_SUCCEEDS),
            o.flag(IT_SUCCEEDS_BESIDE_THE_BALLAST),
        ) {
            (Some(true), Some(false)) => ClaimVerdict::Confirmed,
            (Some(_), Some(_)) => ClaimVerdict::Refuted,
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];
