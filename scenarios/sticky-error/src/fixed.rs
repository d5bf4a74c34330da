//! The risky call runs in a child process. Its fault corrupts the child's
//! context and dies with it; the parent, which started the child before it
//! touched CUDA itself, goes on with a clean context.

use std::time::Duration;

use casebook_driver::device;
use casebook_kernels::fatbin;
use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::names::*;
use crate::{FirstCall, SECOND, first_call, name, unrelated_call};

const RISKY: &str = "risky call";

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    if worker::role().as_deref() == Some(RISKY) {
        let ctx = device::context(rec)?;
        let fault = device::kernel(rec, &ctx, fatbin::FAULT, "spin_then_fault")?;
        first_call(rec, &ctx, &fault, FirstCall::Faults);
        return Ok(());
    }
    // FIX: the call that may fault gets a process of its own.
    let risky = worker::run(RISKY, Duration::from_secs(60), &[])?;
    worker::replay(rec, "child process: first call", &risky);

    let _ctx = device::context(rec)?;
    let second = unrelated_call(rec, "second call");
    rec.fact(SECOND, name(&second));
    let third = unrelated_call(rec, "third call");
    rec.fact(THIRD_CALL_RETURNS, name(&third));
    Ok(())
}
// ANCHOR_END: run
