//! The job sets CUDA_VISIBLE_DEVICES itself, to the GPU index from its
//! configuration: here the index one past the machine's last GPU, as "1" is
//! on a machine with one GPU. The driver then sees no GPU: cuInit returns
//! CUDA_ERROR_NO_DEVICE.

use casebook_model::Recorder;

use crate::names::*;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let configured = crate::machine_gpus()?; // the job's GPU from its configuration ("1" on one GPU)
    crate::set_visible(&configured.to_string()); // BUG: a GPU the machine does not have
    rec.fact(VISIBLE, "the index one past the machine's last GPU");
    crate::work(rec)
}
// ANCHOR_END: run
