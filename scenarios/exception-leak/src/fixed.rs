//! The buffer is a cudarc `CudaSlice`: its Drop frees it on the early return
//! and while a panic unwinds, as a unique_ptr with a deleter does in C++.
//! No path can skip the free, so the failed calls leak nothing.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::{BYTES, Model, validate};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, model_call)
}

// ANCHOR: model_call
fn model_call(rec: &mut Recorder, m: &Model, batch: &[f32]) -> anyhow::Result<Vec<f32>> {
    let mut buf = rec.step("cuMemAllocAsync", unsafe {
        m.stream.alloc::<f32>(BYTES / 4)
    })?;
    rec.step("cuMemcpyHtoDAsync", m.stream.memcpy_htod(batch, &mut buf))?;
    validate(batch)?; // FIX: returning here drops `buf`, which frees it
    let n = batch.len() as i32;
    let mut launch = m.stream.launch_builder(&m.scale);
    launch.arg(&mut buf).arg(&n).arg(&2.0f32);
    rec.step("cuLaunchKernel scale", unsafe {
        launch.launch(LaunchConfig::for_num_elems(n as u32))
    })?;
    let mut output = vec![0.0f32; batch.len()];
    rec.step(
        "cuMemcpyDtoHAsync",
        m.stream.memcpy_dtoh(&buf.slice(..batch.len()), &mut output),
    )?;
    assert!(output.iter().all(|x| x.is_finite()), "the model overflowed"); // FIX: unwinding drops `buf` too
    Ok(output)
}
// ANCHOR_END: model_call
