//! Each call fills a host input buffer and a pinned staging buffer, copies
//! to the device and back, and keeps neither: the Vec is leaked and the
//! pinned buffer is never handed to cuMemFreeHost.

use std::sync::Arc;

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::{CudaContext, result};

use crate::{FLOATS, drive};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, model_call)
}

// ANCHOR: model_call
fn model_call(rec: &mut Recorder, ctx: &Arc<CudaContext>) -> anyhow::Result<()> {
    let input: Vec<f32> = (0..FLOATS).map(|i| i as f32).collect();
    let pinned = rec.step("cuMemHostAlloc", unsafe {
        result::malloc_host(FLOATS * 4, 0)
    })? as *mut f32;
    // SAFETY: `pinned` holds FLOATS floats.
    let staging = unsafe { std::slice::from_raw_parts_mut(pinned, FLOATS) };
    staging.copy_from_slice(&input);
    let stream = ctx.default_stream();
    let dev = rec.step("cuMemcpyHtoDAsync", stream.clone_htod(staging))?;
    rec.step("cuMemcpyDtoHAsync", stream.memcpy_dtoh(&dev, staging))?;
    std::mem::forget(input); // BUG: the host buffer is never freed (new without delete)
    Ok(()) // BUG: nor is the pinned one (no cuMemFreeHost)
}
// ANCHOR_END: model_call
