//! The module holds machine code for each architecture the program targets
//! (sm_80 and sm_90) and PTX for the newest (compute_90), as
//! `-gencode=arch=compute_90,code=[sm_90,compute_90]` builds it: the driver
//! runs the machine code where it matches, and compiles the PTX where none
//! does.

use casebook_driver::device;
use casebook_kernels::fatbin;
use casebook_model::Recorder;

use crate::names::*;
use crate::{machine_code_for_device, scale_and_check};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    // FIX: machine code for the target architectures, plus PTX.
    let scale = device::kernel(rec, &ctx, fatbin::SCALE, "scale")?;
    let matches = machine_code_for_device(rec, &ctx, &scale)?;
    rec.fact(MACHINE_CODE_FOR_DEVICE, matches);
    scale_and_check(rec, &ctx, &scale)?;
    Ok(())
}
// ANCHOR_END: run
