//! The heap stays at its default. The probe counts how many threads get
//! null; then the article's kernel, which does not check, writes through it.

use crate::fatbin;
use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::driver::PushKernelArg;

use crate::{FLOATS, config, input, probe, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut k = setup(rec)?;
    let use_heap = device::kernel(rec, &k.ctx, fatbin::HEAP, "heap_use_unchecked")?;
    probe(rec, &mut k)?;
    let input = rec.step("cuMemcpyHtoDAsync", k.stream.clone_htod(&input(k.threads)))?;
    let mut output = rec.step("cuMemAllocAsync", k.stream.alloc_zeros::<f32>(k.threads))?;
    let (n, floats) = (k.threads as i32, FLOATS as i32);
    let mut launch = k.stream.launch_builder(&use_heap);
    launch.arg(&input).arg(&mut output).arg(&n).arg(&floats); // BUG: no null check inside
    rec.step("cuLaunchKernel heap_use_unchecked", unsafe {
        launch.launch(config(k.threads))
    })?;
    rec.step("cuStreamSynchronize", k.stream.synchronize())?;
    Ok(())
}
// ANCHOR_END: run
