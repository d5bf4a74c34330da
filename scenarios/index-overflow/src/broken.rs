//! The fill kernel's index is an `int`.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::PushKernelArg;

use crate::{ELEMENTS_N, kernels, per_element};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let k = kernels(rec)?;
    let stream = k.ctx.default_stream();
    let mut out = rec.step("cuMemAlloc", stream.alloc_zeros::<f32>(ELEMENTS_N as usize))?;
    let mut launch = stream.launch_builder(&k.fill_int_index); // int i = blockIdx.x * blockDim.x + …
    launch.arg(&mut out).arg(&ELEMENTS_N);
    // SAFETY: the kernel's arguments match its signature.
    rec.step("cuLaunchKernel (fill_int_index)", unsafe {
        launch.launch(per_element())
    })?;
    rec.step("cuStreamSynchronize", stream.synchronize())?;
    Ok(())
}
// ANCHOR_END: run
