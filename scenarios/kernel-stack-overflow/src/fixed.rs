//! The stack limit is raised to what the walk needs before the launch.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::driver::sys;

use crate::{DEPTH, PER_CALL, record_limit, walk};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let need = (DEPTH as usize + 1) * PER_CALL; // FIX: the stack the recursion needs
    rec.step(
        "cuCtxSetLimit STACK_SIZE",
        ctx.set_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE, need),
    )?;
    record_limit(rec, &ctx);
    walk(rec, &ctx)
}
// ANCHOR_END: run
