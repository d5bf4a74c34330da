//! Two fixes. `primary`: every call uses the device's primary context (what
//! the runtime API and cudarc's `CudaContext::new` do), retained once.
//! `destroy`: each call still creates a context, and destroys it.

use casebook_driver::RecordSteps;
use casebook_driver::device::{self as dev_helpers, own_memory_bytes};
use casebook_model::Recorder;
use cudarc::driver::{result, sys};

use crate::names::*;
use crate::{DESTROY_CALLS, FIXED_CALLS, TOLERANCE, calls, device, record_cost, work};

// ANCHOR: primary
pub fn primary(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = dev_helpers::context(rec)?; // FIX: one context, the primary one
    let total = ctx.total_mem()?;
    let baseline = own_memory_bytes(rec)?;
    for _ in 0..FIXED_CALLS {
        rec.iteration("call", work)?;
    }
    let after = own_memory_bytes(rec)?;
    // The cost of one more context, measured once and destroyed at once.
    let extra = rec.step("cuCtxCreate", unsafe {
        result::ctx::create_v4(std::ptr::null_mut(), 0, ctx.cu_device())
    })?;
    let with_extra = own_memory_bytes(rec)?;
    rec.step(
        "cuCtxDestroy",
        unsafe { sys::cuCtxDestroy_v2(extra) }.result(),
    )?;
    record_cost(rec, with_extra.saturating_sub(after) as usize, total);
    rec.check(
        OWN_MEMORY_RETURNS_TO_ITS_BASELINE,
        after <= baseline + TOLERANCE,
    );
    Ok(())
}
// ANCHOR_END: primary

// ANCHOR: destroy
pub fn destroy(rec: &mut Recorder) -> anyhow::Result<()> {
    let dev = device(rec)?;
    let first = rec.step("cuCtxCreate", unsafe {
        result::ctx::create_v4(std::ptr::null_mut(), 0, dev)
    })?;
    let baseline = own_memory_bytes(rec)?;
    for _ in 0..calls(rec, DESTROY_CALLS) {
        rec.iteration("call", |rec| {
            let ctx = rec.step("cuCtxCreate", unsafe {
                result::ctx::create_v4(std::ptr::null_mut(), 0, dev)
            })?;
            work(rec)?;
            rec.step(
                "cuCtxDestroy",
                unsafe { sys::cuCtxDestroy_v2(ctx) }.result(),
            ) // FIX
        })?;
    }
    rec.step("cuCtxSetCurrent", unsafe {
        result::ctx::set_current(first)
    })?;
    let after = own_memory_bytes(rec)?;
    rec.check(
        OWN_MEMORY_RETURNS_TO_ITS_BASELINE,
        after <= baseline + TOLERANCE,
    );
    Ok(())
}
// ANCHOR_END: destroy
