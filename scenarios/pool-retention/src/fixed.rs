//! The same, and when the phase is over the pool is trimmed: its unused
//! memory goes back to the device, where another process can have it.

use casebook_model::Recorder;

use crate::Threshold;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::run(rec, [Threshold::Default, Threshold::Raised], crate::trim) // FIX: cuMemPoolTrimTo(pool, 0) once the phase is over
}
