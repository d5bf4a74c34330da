//! The model call allocates its buffer with raw cuMemAlloc and returns
//! without cuMemFree. Nothing fails yet: each call works, and the leak only
//! shows when the leaks add up to the free memory.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::{LaunchConfig, PushKernelArg, result};

use crate::Model;
use crate::names::*;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, model_call)
}

// ANCHOR: model_call
pub(crate) fn model_call(rec: &mut Recorder, m: &Model) -> anyhow::Result<()> {
    let buf = rec.step("cuMemAlloc", unsafe { result::malloc_sync(m.bytes) })?;
    rec.step("cuMemcpyHtoD", unsafe {
        result::memcpy_htod_sync(buf, &m.input)
    })?;
    let n = m.input.len() as i32;
    let mut launch = m.stream.launch_builder(&m.scale);
    launch.arg(&buf).arg(&n).arg(&2.0f32);
    rec.step("cuLaunchKernel scale", unsafe {
        launch.launch(LaunchConfig::for_num_elems(n as u32))
    })?;
    let mut output = vec![0.0f32; m.input.len()];
    rec.step("cuMemcpyDtoH", unsafe {
        result::memcpy_dtoh_sync(&mut output, buf)
    })?;
    rec.check(MODEL_OUTPUT_IS_RIGHT, output == m.expected);
    // BUG: `buf` is never freed. It stays allocated until the process ends.
    Ok(())
}
// ANCHOR_END: model_call
