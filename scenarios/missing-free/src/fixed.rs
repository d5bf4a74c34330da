//! The buffer is a cudarc `CudaSlice`, so it is freed when the call returns,
//! on every path: the safe layer fixes the leak by construction. Free memory
//! ends where it began, after as many calls as the broken variant attempts.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::Model;
use crate::names::*;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, model_call)
}

// ANCHOR: model_call
fn model_call(rec: &mut Recorder, m: &Model) -> anyhow::Result<()> {
    let mut buf = rec.step("cuMemAllocAsync", unsafe {
        m.stream.alloc::<f32>(m.bytes / 4)
    })?;
    rec.step(
        "cuMemcpyHtoDAsync",
        m.stream.memcpy_htod(&m.input, &mut buf),
    )?;
    let n = m.input.len() as i32;
    let mut launch = m.stream.launch_builder(&m.scale);
    launch.arg(&mut buf).arg(&n).arg(&2.0f32);
    rec.step("cuLaunchKernel scale", unsafe {
        launch.launch(LaunchConfig::for_num_elems(n as u32))
    })?;
    let mut output = vec![0.0f32; m.input.len()];
    rec.step(
        "cuMemcpyDtoHAsync",
        m.stream
            .memcpy_dtoh(&buf.slice(..m.input.len()), &mut output),
    )?;
    rec.check(MODEL_OUTPUT_IS_RIGHT, output == m.expected);
    // FIX: `buf` is dropped here, which frees it (cuMemFreeAsync on its stream).
    Ok(())
}
// ANCHOR_END: model_call
