//! The broken program, unchanged, run with CUDA_LAUNCH_BLOCKING=1 in its
//! environment: the variable must be set before CUDA starts, so the program
//! runs in a worker process. Which call reports the fault then?

use std::time::Duration;

use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::{AT_LAUNCH, FIRST};

const BLOCKING: &str = "broken program with CUDA_LAUNCH_BLOCKING=1";

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(BLOCKING) {
        return crate::broken::run(rec);
    }
    let outcome = worker::run_replayed(
        rec,
        BLOCKING,
        Duration::from_secs(60),
        &[("CUDA_LAUNCH_BLOCKING", "1")],
    )?;
    rec.fact(FIRST, outcome.fact(FIRST).cloned().unwrap_or_default());
    rec.check(AT_LAUNCH, outcome.check(AT_LAUNCH) == Some(true));
    Ok(())
}
