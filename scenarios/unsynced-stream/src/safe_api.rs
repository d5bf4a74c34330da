//! cudarc's safe layer cannot express the bug: a `PinnedHostSlice` records
//! an event with each copy into it, and `as_slice()` waits for that event
//! before it hands the host the data.

use casebook_driver::{RecordSteps, device};
use casebook_kernels::fatbin;
use casebook_model::Recorder;
use cudarc::driver::PushKernelArg;

use crate::names::*;
use crate::{FRESH, N, RATE, RUNS, SENTINEL, SPIN_NS};

// ANCHOR: safe_api
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let fill = device::kernel(rec, &ctx, fatbin::SPIN, "spin_then_fill")?;
    let stream = rec.step("cuStreamCreate (non-blocking)", ctx.new_stream())?;
    let mut out = rec.step("cuMemAllocAsync", stream.alloc_zeros::<f32>(N))?;
    let mut host = rec.step("cuMemHostAlloc", unsafe { ctx.alloc_pinned::<f32>(N) })?;
    let mut stale = 0;
    for run in 0..RUNS {
        let fresh = rec.iteration("run", |rec| -> anyhow::Result<bool> {
            let value = (run + 1) as f32;
            host.as_mut_slice()?.fill(SENTINEL);
            let n = N as i32;
            let mut launch = stream.launch_builder(&fill);
            launch.arg(&mut out).arg(&n).arg(&value).arg(&SPIN_NS);
            let cfg = casebook_driver::device::line(8, 256);
            rec.step("cuLaunchKernel spin_then_fill", unsafe {
                launch.launch(cfg)
            })?;
            rec.step("cuMemcpyDtoHAsync", stream.memcpy_dtoh(&out, &mut host))?;
            // No explicit synchronise: as_slice() waits for the copy's event.
            let seen = rec.step(
                "PinnedHostSlice::as_slice (cuEventSynchronize)",
                host.as_slice(),
            )?;
            Ok(seen.iter().all(|&x| x == value))
        })?;
        stale += usize::from(!fresh);
    }
    rec.measure(STALE_READS, stale as f64);
    rec.fact(RATE, casebook_model::runs_in_words(stale, RUNS));
    rec.check(FRESH, stale == 0);
    Ok(())
}
// ANCHOR_END: safe_api
