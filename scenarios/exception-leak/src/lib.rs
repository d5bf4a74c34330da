//! `exception-leak`: an error path between the allocation and the free. In
//! C++ a throw jumps over `cudaFree`; in Rust an early `?` or a panic drops
//! a raw device pointer. Every failed call leaks exactly one allocation.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use casebook_driver::device;
use casebook_driver::prelude::*;
use casebook_kernels::fatbin;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};

mod broken;
mod fixed;

casebook_model::case_modules!();

/// Each call's buffer: the article's 1 GB.
pub const BYTES: usize = 1 << 30;
/// Elements of each batch.
pub const BATCH: usize = 1 << 20;
/// How far measured memory may stray and still count as unchanged.
pub const TOLERANCE: usize = 64 << 20;

/// The batches the program is called with: good ones, and two kinds of bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    Good,
    /// Fails validation: the call returns an error.
    HasNan,
    /// Overflows in the model: the output check panics.
    Overflows,
}

pub const BATCHES: [Batch; 8] = [
    Batch::Good,
    Batch::HasNan,
    Batch::Good,
    Batch::Overflows,
    Batch::Good,
    Batch::HasNan,
    Batch::Good,
    Batch::Overflows,
];

casebook_model::scenario!(Scenario {
    title: "GPU memory shrinks after every error (an exception or early return skips cudaFree)",
    cause: "An error path between cudaMalloc and cudaFree leaves the allocation behind; \
            only an owner that frees on every path (RAII) closes it.",
    fix: "Own each device allocation with an RAII holder (std::unique_ptr with a cudaFree deleter, \
          or cudarc's CudaSlice) so exceptions, early returns and panics still free it.",
    symptoms: &["memory that keeps shrinking"],
    requires: Requirement::GPU_ALONE,
    variants: variants![
        cudarc_pair!(Symptom::check_failed(NO_LEAK)),
        cpp_pair!(Symptom::check_failed(NO_LEAK)),
    ],
});

pub(crate) struct Model {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub scale: CudaFunction,
}

pub(crate) fn batch(kind: Batch) -> Vec<f32> {
    let mut batch: Vec<f32> = (0..BATCH).map(|i| i as f32).collect();
    match kind {
        Batch::Good => {}
        Batch::HasNan => batch[7] = f32::NAN,
        Batch::Overflows => batch[7] = f32::MAX,
    }
    batch
}

/// Rejects a batch with a NaN in it: the early return of the broken call.
pub(crate) fn validate(batch: &[f32]) -> anyhow::Result<()> {
    anyhow::ensure!(!batch.iter().any(|x| x.is_nan()), "the batch contains NaN");
    Ok(())
}

/// Calls the model once per batch, catching its errors and panics as the
/// article's `catch` does, and measures what each failed call left behind.
pub(crate) fn drive(
    rec: &mut Recorder,
    model_call: fn(&mut Recorder, &Model, &[f32]) -> anyhow::Result<Vec<f32>>,
) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, "scale")?;
    let model = Model {
        stream: ctx.default_stream(),
        ctx,
        scale,
    };
    let mut failed = 0usize;
    let mut lost: i64 = 0;
    for (i, kind) in BATCHES.iter().enumerate() {
        let (succeeded, before, after) = rec.iteration("model call", |rec| {
            rec.step("cuCtxSynchronize", model.ctx.synchronize())?;
            let before = device::free_bytes(rec, &model.ctx)?;
            let input = batch(*kind);
            let result = catch_unwind(AssertUnwindSafe(|| model_call(rec, &model, &input)));
            rec.step("cuCtxSynchronize", model.ctx.synchronize())?;
            let after = device::free_bytes(rec, &model.ctx)?;
            anyhow::Ok((matches!(result, Ok(Ok(_))), before, after))
        })?;
        rec.point(FREE_BYTES, (i + 1) as f64, after as f64);
        rec.check(
            GOOD_BATCHES_SUCCEED_BAD_ONES_FAIL,
            succeeded == (*kind == Batch::Good),
        );
        if !succeeded {
            failed += 1;
            lost += before as i64 - after as i64;
        }
    }
    rec.measure(FAILED_CALLS_COUNT, failed as f64);
    rec.measure(BYTES_LOST, lost as f64);
    rec.fact(FAILED_CALLS, failed);
    let per_failure = lost / failed.max(1) as i64;
    let tolerance = TOLERANCE as i64;
    rec.fact(
        LEAK_PER_FAILURE,
        if per_failure.abs() < tolerance {
            "nothing"
        } else if (per_failure - BYTES as i64).abs() < tolerance {
            "exactly one allocation"
        } else {
            "something other than one allocation"
        },
    );
    rec.check(NO_LEAK, lost.abs() < tolerance);
    Ok(())
}

const CLAIMS: &[Claim] = &[Claim {
    id: "002-exception-skips-free",
    source: Source::SEED_002,
    quote: "If an exception is thrown within the `try` block, `cudaFree(dev_ptr)` is not executed. This \
                leaves the allocated device memory unreleased, contributing to memory exhaustion over multiple runs.",
    judged_by: "broken-cpp",
    control: Control::Run("fixed-cpp"),
    reach: Reach::AtBestPartly(
        "in the article's own code the only throw follows a failed cudaMalloc, so nothing was allocated to leak; \
             the leak measured is a throw after a successful allocation, repeated within one process (a process's \
             memory is back when it exits, unless a child it forked after CUDA started still holds its context: orphaned-process)",
    ),
    judge: |o: &Outcome| match (o.check(NO_LEAK), o.fact_text(LEAK_PER_FAILURE)) {
        (Some(false), Some("exactly one allocation")) => ClaimVerdict::Confirmed,
        (Some(false), _) => ClaimVerdict::Partly,
        (Some(true), _) => ClaimVerdict::Refuted,
        (None, _) => ClaimVerdict::Undecided,
    },
}];
