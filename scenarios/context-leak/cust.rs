//! context-leak through cust. cust's legacy `Context::create_and_push`
//! makes a new context and its Drop destroys it: a context made per call and
//! dropped at the end of the call does not leak. What cust still allows is a
//! context that outlives its call, kept with the state made in it.

use casebook_driver::RecordSteps;
use casebook_driver::device::own_memory_bytes;
use casebook_model::{Recorder, VariantFn};
use cust::CudaFlags;
use cust::context::legacy::{Context as OwnContext, ContextFlags};
use cust::device::Device;
use cust::memory::DeviceBuffer;
#[allow(unused_imports)]
use scenario_context_leak::names::*;
use scenario_context_leak::{DESTROY_CALLS, LEAK_CALLS, TOLERANCE, calls, leak_over_calls};

use crate::common::cu;

fn device(rec: &mut Recorder) -> anyhow::Result<Device> {
    rec.step("cuInit", cu(cust::init(CudaFlags::empty())))?;
    Ok(rec.step("cuDeviceGet", cu(Device::get_device(0)))?)
}

/// A call's work in its context: allocate and free a MiB.
fn work(rec: &mut Recorder) -> anyhow::Result<()> {
    let buf = rec.step("cuMemAlloc", cu(DeviceBuffer::<u8>::zeroed(1 << 20)))?;
    rec.step("cuMemFree", cu(DeviceBuffer::drop(buf).map_err(|(e, _)| e)))?;
    Ok(())
}

fn new_context(rec: &mut Recorder, device: Device) -> anyhow::Result<OwnContext> {
    Ok(rec.step(
        "cuCtxCreate",
        cu(OwnContext::create_and_push(
            ContextFlags::SCHED_AUTO,
            device,
        )),
    )?)
}

// ANCHOR: broken
pub fn broken(rec: &mut Recorder) -> anyhow::Result<()> {
    let device = device(rec)?;
    let total = rec.step("cuDeviceTotalMem", cu(device.total_memory()))?;
    let mut sessions = Vec::new();
    // A few calls show the leak; `broken` (cudarc) runs to the driver's limit.
    let n = calls(rec, LEAK_CALLS);
    leak_over_calls(rec, n, total, |rec| {
        let ctx = new_context(rec, device)?;
        work(rec)?;
        // BUG: the context is kept with the call's session, which nothing
        // ever ends: its Drop never runs.
        sessions.push(ctx);
        anyhow::Ok(())
    })
}
// ANCHOR_END: broken

// ANCHOR: fixed
pub fn fixed(rec: &mut Recorder) -> anyhow::Result<()> {
    let device = device(rec)?;
    let _first = new_context(rec, device)?;
    let baseline = own_memory_bytes(rec)?;
    for _ in 0..calls(rec, DESTROY_CALLS) {
        rec.iteration("call", |rec| {
            let _ctx = new_context(rec, device)?;
            work(rec)?;
            anyhow::Ok(())
        })?; // the call's context is dropped here, and destroyed
    }
    // ANCHOR_END: fixed
    let after = own_memory_bytes(rec)?;
    rec.check(
        OWN_MEMORY_RETURNS_TO_ITS_BASELINE,
        after <= baseline + TOLERANCE,
    );
    Ok(())
}

/// The variants of this file, by their names in the catalogue.
pub const VARIANTS: &[(&str, VariantFn)] = &[("broken-cust", broken), ("fixed-cust", fixed)];
