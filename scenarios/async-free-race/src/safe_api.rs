//! cudarc's safe layer, with event tracking on (the default), prevents the
//! race by construction: launching with `&x` on B records a read event on
//! `x`, and dropping `x` makes A wait for that event before cuMemFreeAsync.
//! The broken variant had to step down to raw pointers to race at all.

use casebook_driver::{RecordSteps, device};
use casebook_kernels::fatbin;
use casebook_model::Recorder;
use cudarc::driver::PushKernelArg;

use crate::{GIVEN, N, NEXT_OWNER, RUNS, SPIN_NS, tally};

// ANCHOR: safe_api
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let copy = device::kernel(rec, &ctx, fatbin::SPIN, "spin_then_copy")?;
    let a = rec.step("cuStreamCreate A (non-blocking)", ctx.new_stream())?;
    let b = rec.step("cuStreamCreate B (non-blocking)", ctx.new_stream())?;
    let mut out = rec.step("cuMemAllocAsync (B)", b.alloc_zeros::<f32>(N))?;
    let (mut corrupted, mut reused) = (0, 0);
    for _ in 0..RUNS {
        let (ok, same_block) = rec.iteration("run", |rec| -> anyhow::Result<(bool, bool)> {
            let x = rec.step("cuMemAllocAsync + copy (A)", a.clone_htod(&vec![GIVEN; N]))?;
            // Read before the launch: taking the address records an event on A,
            // and the launch's read event on B must be the last one recorded.
            let x_addr = x.cu_device_ptr_for_report();
            let n = N as i32;
            let mut launch = b.launch_builder(&copy);
            launch.arg(&x).arg(&mut out).arg(&n).arg(&SPIN_NS);
            let cfg = casebook_driver::device::line(8, 256);
            rec.step("cuLaunchKernel spin_then_copy (B)", unsafe {
                launch.launch(cfg)
            })?;
            drop(x); // A waits on x's read event, then cuMemFreeAsync
            let y = rec.step(
                "cuMemAllocAsync + copy (A)",
                a.clone_htod(&vec![NEXT_OWNER; N]),
            )?;
            let same_block = y.cu_device_ptr_for_report() == x_addr;
            let seen = rec.step("cuMemcpyDtoH (B)", b.clone_dtoh(&out))?;
            Ok((seen.iter().all(|&v| v == GIVEN), same_block))
        })?;
        corrupted += usize::from(!ok);
        reused += usize::from(same_block);
    }
    tally(rec, corrupted, reused);
    Ok(())
}
// ANCHOR_END: safe_api

/// The device address of a slice, for telling whether a block was reused.
trait DeviceAddress {
    fn cu_device_ptr_for_report(&self) -> u64;
}

impl DeviceAddress for cudarc::driver::CudaSlice<f32> {
    fn cu_device_ptr_for_report(&self) -> u64 {
        use cudarc::driver::DevicePtr;
        let (ptr, _sync) = self.device_ptr(self.stream());
        ptr
    }
}
