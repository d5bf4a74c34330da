//! After the first call faults, the process carries on in the same context,
//! and then tries the article's remedy: a device reset (cudaDeviceReset is
//! cuDevicePrimaryCtxReset on the primary context). In the control the
//! first call fails without a fault: its launch is refused, and the context
//! stays as it was.

use casebook_driver::device;
use casebook_kernels::fatbin;
use casebook_model::Recorder;

use crate::names::*;
use crate::{AFTER_RESET, FirstCall, SECOND, first_call, name, unrelated_call};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    after_the_first_call(rec, FirstCall::Faults)
}

// ANCHOR: refused_launch
pub fn refused_launch(rec: &mut Recorder) -> anyhow::Result<()> {
    after_the_first_call(rec, FirstCall::LaunchRefused)
}
// ANCHOR_END: refused_launch

// ANCHOR: run
fn after_the_first_call(rec: &mut Recorder, first: FirstCall) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let fault = device::kernel(rec, &ctx, fatbin::FAULT, "spin_then_fault")?;
    first_call(rec, &ctx, &fault, first);
    // BUG: the process goes on with the context the fault corrupted.
    let second = unrelated_call(rec, "second call");
    rec.fact(SECOND, name(&second));
    let third = unrelated_call(rec, "third call");
    rec.fact(THIRD_CALL_RETURNS, name(&third));

    let dev = ctx.cu_device();
    // SAFETY: the old context's objects (`fault`, `ctx`) are forgotten below.
    let reset = unsafe { device::primary_ctx::reset(rec, dev) };
    rec.fact(RESET_RETURNS, name(&reset));
    let after = device::primary_ctx::retain_and_call(rec, dev, "after reset");
    rec.fact(AFTER_RESET, after.is_ok());
    // The context these hold was reset under them; let the process end
    // without running their destructors against it.
    std::mem::forget(fault);
    std::mem::forget(ctx);
    Ok(())
}
// ANCHOR_END: run
