//! Every call creates a context with cuCtxCreate, does its work in it, and
//! returns without cuCtxDestroy. Each context keeps its reservation of
//! device memory until the process ends.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::{result, sys};

use crate::{MAX_CALLS, calls, device, free_bytes, leak_until_failure, work};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    left(rec, MAX_CALLS)
}

// ANCHOR: run
/// Up to `max_calls` calls, each leaving its context behind.
pub fn left(rec: &mut Recorder, max_calls: usize) -> anyhow::Result<()> {
    let dev = device(rec)?;
    let total = rec.step("cuDeviceTotalMem", unsafe {
        result::device::total_mem(dev)
    })?;
    let n = calls(rec, max_calls);
    leak_until_failure(rec, n, total, |rec| {
        let _ctx = rec.step("cuCtxCreate", unsafe {
            result::ctx::create_v4(std::ptr::null_mut(), 0, dev)
        })?;
        work(rec)?;
        // BUG: the context is never destroyed (no cuCtxDestroy).
        free_bytes(rec)
    })
}
// ANCHOR_END: run

// The control of broken's claims: the same loop, each call's context
// destroyed once its work is done and the free memory read in it.
pub fn destroyed(rec: &mut Recorder) -> anyhow::Result<()> {
    destroying(rec, MAX_CALLS)
}

// ANCHOR: destroyed
/// Up to `max_calls` calls, each destroying its context.
pub fn destroying(rec: &mut Recorder, max_calls: usize) -> anyhow::Result<()> {
    let dev = device(rec)?;
    let total = rec.step("cuDeviceTotalMem", unsafe {
        result::device::total_mem(dev)
    })?;
    let n = calls(rec, max_calls);
    leak_until_failure(rec, n, total, |rec| {
        let ctx = rec.step("cuCtxCreate", unsafe {
            result::ctx::create_v4(std::ptr::null_mut(), 0, dev)
        })?;
        work(rec)?;
        let free = free_bytes(rec)?;
        let destroy = unsafe { sys::cuCtxDestroy_v2(ctx) }.result();
        rec.step("cuCtxDestroy", destroy)?; // FIX
        Ok::<_, cudarc::driver::DriverError>(free)
    })
}
// ANCHOR_END: destroyed
