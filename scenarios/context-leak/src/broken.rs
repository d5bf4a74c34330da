//! Every call creates a context with cuCtxCreate, does its work in it, and
//! returns without cuCtxDestroy. Each context keeps its reservation of
//! device memory until the process ends.

use casebook_model::{Recorder, Unit};
use cudarc::driver::result;

use crate::{MAX_CALLS, STILL_FREE, calls, device, free_bytes, record_cost, work};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let dev = device(rec)?;
    let total = rec.step("cuDeviceTotalMem", unsafe {
        result::device::total_mem(dev)
    })?;
    let mut frees = Vec::new();
    let mut failure = None;
    for call in 0..calls(rec, MAX_CALLS) {
        let step = rec.iteration("call", |rec| {
            let _ctx = rec.step("cuCtxCreate", unsafe {
                result::ctx::create_v4(std::ptr::null_mut(), 0, dev)
            })?;
            work(rec)?;
            // BUG: the context is never destroyed (no cuCtxDestroy).
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
    rec.measure("calls_completed", frees.len() as f64, Unit::Count);
    if let [first, second, ..] = frees[..] {
        record_cost(rec, first.saturating_sub(second), total);
    }
    if let (Some(_), Some(&last)) = (&failure, frees.last()) {
        casebook_model::device::measure_bytes(rec, "free_when_it_failed", last);
        // More than 5% of the device: the failure is not the device being full.
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
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
// ANCHOR_END: run
