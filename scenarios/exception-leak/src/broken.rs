//! A raw device pointer and two ways out between its allocation and its
//! free: an early `?` (the batch fails validation) and a panic (the output
//! check). Either way the free is never reached, and the pointer is gone.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::{LaunchConfig, PushKernelArg, result};

use crate::{BYTES, Model, validate};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, model_call)
}

// ANCHOR: model_call
fn model_call(rec: &mut Recorder, m: &Model, batch: &[f32]) -> anyhow::Result<Vec<f32>> {
    let buf = rec.step("cuMemAlloc", unsafe { result::malloc_sync(BYTES) })?;
    rec.step("cuMemcpyHtoD", unsafe {
        result::memcpy_htod_sync(buf, batch)
    })?;
    validate(batch)?; // BUG: this early return skips the cuMemFree below
    let n = batch.len() as i32;
    let mut launch = m.stream.launch_builder(&m.scale);
    launch.arg(&buf).arg(&n).arg(&2.0f32);
    rec.step("cuLaunchKernel scale", unsafe {
        launch.launch(LaunchConfig::for_num_elems(n as u32))
    })?;
    let mut output = vec![0.0f32; batch.len()];
    rec.step("cuMemcpyDtoH", unsafe {
        result::memcpy_dtoh_sync(&mut output, buf)
    })?;
    assert!(output.iter().all(|x| x.is_finite()), "the model overflowed"); // BUG: so does this panic
    rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    Ok(output)
}
// ANCHOR_END: model_call
