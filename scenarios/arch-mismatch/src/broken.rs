//! The module the program ships holds machine code for compute capability
//! 7.5 only, as a build with `-arch=sm_75` makes it, and no PTX. Loaded on
//! a GPU of another architecture, there is nothing the driver can run.

use casebook_driver::device;
use casebook_model::Recorder;

use crate::fatbin;
use crate::names::*;
use crate::{later_call, message, rule_lets_sm75_run};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let allowed = rule_lets_sm75_run(rec, &ctx)?;
    rec.fact(RULE_LETS_IT_RUN, allowed);
    // BUG: machine code for one older architecture, and no PTX to fall back on.
    let loaded = device::kernel(rec, &ctx, fatbin::SCALE_SM75_SASS, "scale");
    rec.fact(LOADED, loaded.is_ok());
    if let Err(e) = &loaded {
        rec.fact(MESSAGE, message(e));
    }
    later_call(rec);
    Ok(())
}
// ANCHOR_END: run
