//! The host buffer is a Vec that drops, and the pinned buffer is cudarc's
//! `PinnedHostSlice`, which frees itself with cuMemFreeHost: RAII on both.

use std::sync::Arc;

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::CudaContext;

use crate::{FLOATS, drive};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, model_call)
}

// ANCHOR: model_call
fn model_call(rec: &mut Recorder, ctx: &Arc<CudaContext>) -> anyhow::Result<()> {
    let input: Vec<f32> = (0..FLOATS).map(|i| i as f32).collect();
    let mut pinned = rec.step("cuMemHostAlloc", unsafe { ctx.alloc_pinned::<f32>(FLOATS) })?;
    pinned.as_mut_slice()?.copy_from_slice(&input);
    let stream = ctx.default_stream();
    let dev = rec.step("cuMemcpyHtoDAsync", stream.clone_htod(&pinned))?;
    rec.step("cuMemcpyDtoHAsync", stream.memcpy_dtoh(&dev, &mut pinned))?;
    pinned.as_slice()?; // waits for the copy before the buffer may go
    Ok(()) // FIX: `input` and `pinned` are freed here
}
// ANCHOR_END: model_call
