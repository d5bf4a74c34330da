//! `unhandled-oom-path`: the program catches an out-of-memory error and
//! retries with a smaller batch, but the failed attempt's partial
//! allocations were never released, so the retries fail too. Releasing them
//! on the error path (RAII) lets the smaller batch through.
//!
//! The first batch needs 1.5 times the free memory, in four layers of
//! activations; each retry halves the batch.

use casebook_driver::device::{self, PAGE, measure_bytes};
use casebook_driver::prelude::*;
use cudarc::driver::{CudaStream, DriverError, sys};
use std::sync::Arc;

mod broken;
mod fixed;

casebook_model::case_modules!();

pub const LAYERS: usize = 4;
pub const FIRST_BATCH: usize = 64;
pub const SMALLEST_BATCH: usize = 8;

casebook_model::scenario!(Scenario {
    title: "Out of memory on every retry after catching the first out-of-memory error",
    cause: "Catching the error does not free what the failed attempt had already allocated; \
            unless the error path releases it (RAII), every retry runs with less memory.",
    fix: "Hold each attempt's allocations in RAII owners (cudarc's CudaSlice) so returning on out- \
          of-memory frees the layers already allocated before retrying with a smaller batch.",
    symptoms: &["out of memory", "out of memory with batch size 1"],
    requires: Requirement::GPU_FILLED,
    claims: &[],
    variants: variants![
        cudarc_pair!(Symptom::check_failed(RETRY_OK)).with_fixed(|v| v.also_differs(
            "each layer is a cudarc `CudaSlice`, allocated from the stream-ordered pool \
             (cuMemAllocAsync) where `broken` calls cuMemAlloc: dropping the slices on \
             the error path is the fix, and the safe layer is what provides it.",
        )),
    ],
});

pub(crate) struct Model {
    pub stream: Arc<CudaStream>,
    /// Bytes of one layer's activations per sample.
    pub unit: usize,
}

impl Model {
    pub fn layer_bytes(&self, batch: usize) -> usize {
        batch * self.unit
    }
}

pub(crate) fn is_oom(e: &DriverError) -> bool {
    e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY
}

/// Tries the first batch, then halves it after each out-of-memory error,
/// down to SMALLEST_BATCH.
pub(crate) fn drive(
    rec: &mut Recorder,
    attempt: fn(&mut Recorder, &Model, usize) -> Result<(), DriverError>,
) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let free = device::free_bytes(rec, &ctx)?;
    let unit = free * 3 / 2 / (LAYERS * FIRST_BATCH) / PAGE * PAGE;
    measure_bytes(rec, FREE_BEFORE, free);
    measure_bytes(rec, BYTES_PER_SAMPLE_PER_LAYER, unit);
    rec.fact(FIRST_BATCH_NEEDS, "1.5 times the free memory");
    let model = Model {
        stream: ctx.default_stream(),
        unit,
    };
    let mut batch = FIRST_BATCH;
    let mut succeeded = None;
    while batch >= SMALLEST_BATCH {
        match rec.iteration("attempt", |rec| attempt(rec, &model, batch)) {
            Ok(()) => {
                succeeded = Some(batch);
                break;
            }
            Err(e) if is_oom(&e) => batch /= 2, // caught: log it and retry smaller
            Err(e) => return Err(e.into()),
        }
    }
    rec.step("cuCtxSynchronize", ctx.synchronize())?;
    let left = device::free_bytes(rec, &ctx)?;
    measure_bytes(rec, FREE_AFTER, left);
    rec.measure(BATCH_THAT_SUCCEEDED_COUNT, succeeded.unwrap_or(0) as f64);
    rec.fact(
        BATCH_THAT_SUCCEEDED,
        match succeeded {
            Some(b) => format!("1/{} of the first", FIRST_BATCH / b),
            None => "none".to_owned(),
        },
    );
    rec.check(RETRY_OK, succeeded.is_some());
    Ok(())
}
