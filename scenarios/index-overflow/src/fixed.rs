//! The fill kernel forms its index in 64 bits; a second kernel counts the
//! elements it did not write.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::PushKernelArg;

use crate::names::*;
use crate::{ELEMENTS_N, kernels, per_element};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let k = kernels(rec)?;
    let stream = k.ctx.default_stream();
    let mut out = rec.step("cuMemAlloc", stream.alloc_zeros::<f32>(ELEMENTS_N as usize))?;
    let mut last = rec.step("cuMemAlloc", stream.alloc_zeros::<i64>(1))?;
    let mut launch = stream.launch_builder(&k.fill_64bit_index); // (long long)blockIdx.x * …
    launch.arg(&mut out).arg(&ELEMENTS_N).arg(&mut last);
    // SAFETY: the kernel's arguments match its signature.
    rec.step("cuLaunchKernel (fill_64bit_index)", unsafe {
        launch.launch(per_element())
    })?;
    // ANCHOR_END: run
    let mut unset = rec.step("cuMemAlloc", stream.alloc_zeros::<u64>(1))?;
    let mut count = stream.launch_builder(&k.count_unset);
    count.arg(&out).arg(&ELEMENTS_N).arg(&mut unset);
    // SAFETY: as above.
    rec.step("cuLaunchKernel (count_unset)", unsafe {
        count.launch(per_element())
    })?;
    let unset = rec.step("cuMemcpyDtoH", stream.clone_dtoh(&unset))?;
    let last = rec.step("cuMemcpyDtoH", stream.clone_dtoh(&last))?;
    rec.check(EVERY_ELEMENT_WRITTEN, unset == [0]);
    rec.measure(LAST_BLOCK_OFFSET, last[0] as f64);
    rec.fact(
        PRODUCT_SIGN,
        if last[0] >= 1 << 31 {
            "positive: unsigned arithmetic"
        } else {
            "negative: it wrapped"
        },
    );
    Ok(())
}
