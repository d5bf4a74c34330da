//! The same configuration, with the GPU taken from those the launcher gave
//! the process (the configured index modulo their number): the driver sees
//! it, and the work runs.

use casebook_model::Recorder;

use crate::names::*;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let configured = crate::machine_gpus()?; // the same configuration as the broken program
    let launcher = crate::launcher_gpus()?;
    crate::set_visible(&launcher[configured as usize % launcher.len()]); // FIX: one it was given
    rec.fact(VISIBLE, "a GPU the launcher gave");
    crate::work(rec)
}
// ANCHOR_END: run
