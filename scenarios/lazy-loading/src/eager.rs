//! The broken program, unchanged, in a worker process started with
//! CUDA_MODULE_LOADING=EAGER: every kernel is loaded with its module.

use std::time::Duration;

use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::names::*;

const ROLE: &str = "broken program with CUDA_MODULE_LOADING=EAGER";

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(ROLE) {
        return crate::broken::run(rec);
    }
    let outcome = worker::run(
        ROLE,
        Duration::from_secs(60),
        &[("CUDA_MODULE_LOADING", "EAGER")],
    )?;
    worker::replay(rec, ROLE, &outcome);
    rec.check(RELEASED, outcome.check(RELEASED) == Some(true));
    Ok(())
}
