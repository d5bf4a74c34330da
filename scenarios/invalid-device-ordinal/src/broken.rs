//! The job's configuration names its GPU (`cuda:1`, `--gpu 1`, a rank):
//! here the ordinal one past the last GPU this process sees, as `cuda:1` is
//! on a machine with one GPU. The driver refuses it at cuDeviceGet, before
//! any context exists.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::result;

use crate::names::*;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.step("cuInit", result::init())?;
    let seen = rec.step("cuDeviceGetCount", result::device::get_count())?;
    rec.measure(DEVICES_SEEN, f64::from(seen));
    let ordinal = seen; // BUG: the GPU from the job's configuration, which this process does not see
    rec.fact(ORDINAL, "one past the last GPU the process sees");
    let device = rec.step(
        "cuDeviceGet (the configured ordinal)",
        result::device::get(ordinal),
    );
    let ran = crate::work(rec, device).is_ok();
    rec.check(RAN, ran);
    Ok(())
}
// ANCHOR_END: run
