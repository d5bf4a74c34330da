//! context-leak through cust. cust's legacy `Context::create_and_push`
//! makes a new context and its Drop destroys it: a context made per call and
//! dropped at the end of the call does not leak. What cust still allows is a
//! context that outlives its call, kept with the state made in it.

use casebook_model::device::measure_bytes;
use casebook_model::{Recorder, Unit};
use cust::CudaFlags;
use cust::context::legacy::{Context as OwnContext, ContextFlags};
use cust::device::Device;
use cust::memory::DeviceBuffer;
use scenario_context_leak::{DESTROY_CALLS, MAX_CALLS, STILL_FREE, TOLERANCE, calls, record_cost};

use crate::common::{cu, free_bytes};

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
    let mut frees = Vec::new();
    let mut failure = None;
    for call in 0..calls(rec, MAX_CALLS) {
        let step = rec.iteration("call", |rec| {
            let ctx = new_context(rec, device)?;
            work(rec)?;
            // BUG: the context is kept with the call's session, which nothing
            // ever ends: its Drop never runs.
            sessions.push(ctx);
            free_bytes(rec)
        });
        match step {
            Ok(free) => {
                rec.point("free_bytes", (call + 1) as f64, free as f64);
                frees.push(free);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    // ANCHOR_END: broken
    rec.measure("calls_completed", frees.len() as f64, Unit::Count);
    if let [first, second, ..] = frees[..] {
        record_cost(rec, first.saturating_sub(second), total);
    }
    if let (Some(_), Some(&last)) = (&failure, frees.last()) {
        measure_bytes(rec, "free_when_it_failed", last);
        rec.fact(
            STILL_FREE,
            if last * 20 > total {
                "more than 5% of the device"
            } else {
                "almost none"
            },
        );
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

// ANCHOR: fixed
pub fn fixed(rec: &mut Recorder) -> anyhow::Result<()> {
    let device = device(rec)?;
    let _first = new_context(rec, device)?;
    let baseline = free_bytes(rec)?;
    for _ in 0..calls(rec, DESTROY_CALLS) {
        rec.iteration("call", |rec| {
            let _ctx = new_context(rec, device)?;
            work(rec)?;
            anyhow::Ok(())
        })?; // the call's context is dropped here, and destroyed
    }
    // ANCHOR_END: fixed
    let after = free_bytes(rec)?;
    rec.check(
        "free memory returns to its baseline",
        after + TOLERANCE >= baseline,
    );
    Ok(())
}
