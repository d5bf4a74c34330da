//! The broken program, unchanged, in a worker process started with
//! CUDA_MODULE_LOADING=EAGER: every kernel is loaded with its module.

use std::time::Duration;

use casebook_model::{Outcome, Recorder};
use casebook_runtime::worker;

use crate::names::*;

/// The worker's role.
pub(crate) const ROLE: &str = "broken program with CUDA_MODULE_LOADING=EAGER";

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(ROLE) {
        return crate::broken::run(rec);
    }
    let outcome = under_eager(rec)?;
    rec.check(RELEASED, outcome.check(RELEASED) == Some(true));
    Ok(())
}

/// Runs the broken program in a worker under CUDA_MODULE_LOADING=EAGER and
/// copies what it recorded into this variant's record.
pub(crate) fn under_eager(rec: &mut Recorder) -> anyhow::Result<Outcome> {
    Ok(worker::run_replayed(
        rec,
        ROLE,
        Duration::from_secs(60),
        &[("CUDA_MODULE_LOADING", "EAGER")],
    )?)
}
