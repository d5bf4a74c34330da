//! The ordinal is taken from what the process sees: the configured one
//! when it exists, else the count's remainder (a rank spread over the GPUs
//! there are). Which physical GPU a process gets is set outside it, with
//! CUDA_VISIBLE_DEVICES, before it starts.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::result;

use crate::names::*;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.step("cuInit", result::init())?;
    let seen = rec.step("cuDeviceGetCount", result::device::get_count())?;
    rec.measure(DEVICES_SEEN, f64::from(seen));
    let configured = seen; // the same configuration as the broken program
    let ordinal = configured % seen; // FIX: an ordinal this process sees
    rec.fact(ORDINAL, "one past the last GPU the process sees");
    let device = rec.step(
        "cuDeviceGet (an ordinal the process sees)",
        result::device::get(ordinal),
    );
    let ran = crate::work(rec, device).is_ok();
    rec.check(RAN, ran);
    Ok(())
}
// ANCHOR_END: run
