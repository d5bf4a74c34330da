//! A light kernel (it scales a buffer) launched with 2048 threads a block:
//! more than any block may have, whatever the kernel; then with 1024, the
//! limit, and with 1025, one thread past it.

use casebook_driver::{RecordSteps, device};
use casebook_kernels::fatbin;
use casebook_model::Recorder;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DriverError, PushKernelArg};

use crate::names::*;
use crate::{N, message};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, "scale")?;
    let stream = ctx.default_stream();
    let mut data = rec.step("cuMemAlloc", stream.alloc_zeros::<f32>(N))?;
    // BUG: more threads than a block may have.
    let launched = scale_over(rec, &stream, &scale, &mut data, 2048, "");
    if let Err(e) = &launched {
        rec.fact(MESSAGE, message(e));
    }
    rec.fact(BLOCK_2048_LAUNCHES, launched.is_ok());
    // The largest block a launch may have.
    let later = scale_over(rec, &stream, &scale, &mut data, 1024, "later: ");
    let synced = later.and_then(|_| rec.step("cuStreamSynchronize", stream.synchronize()));
    rec.fact(BLOCK_1024_LAUNCHES, synced.is_ok());
    rec.fact(LATER_CALL, synced.is_ok());
    // One thread past the limit.
    let just_over = scale_over(rec, &stream, &scale, &mut data, 1025, "later: ");
    rec.fact(BLOCK_1025_LAUNCHES, just_over.is_ok());
    Ok(())
}

/// The scale kernel over the whole buffer, `threads` threads a block,
/// recorded as "cuLaunchKernel scale (`threads` threads)" after `prefix`.
fn scale_over(
    rec: &mut Recorder,
    stream: &Arc<CudaStream>,
    scale: &CudaFunction,
    data: &mut CudaSlice<f32>,
    threads: u32,
    prefix: &str,
) -> Result<(), DriverError> {
    let n = N as i32;
    let mut launch = stream.launch_builder(scale);
    launch.arg(data).arg(&n).arg(&2.0f32);
    let config = device::line((N as u32).div_ceil(threads), threads);
    let label = format!("{prefix}cuLaunchKernel scale ({threads} threads)");
    rec.step(&label, unsafe { launch.launch(config) })
        .map(|_| ())
}
// ANCHOR_END: run
