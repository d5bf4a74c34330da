//! Seed 004's misconception read the way a user meets it: nvidia-smi's
//! free memory for this GPU, taken while no process holds the GPU, and a
//! new process then asking for that much, less a margin, in one block. The
//! new process first makes its context, which takes memory nvidia-smi
//! counted as free.

use casebook_driver::device;
use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::names::*;

/// Two 2 MiB pages: all of nvidia-smi's free memory, but for less than the
/// driver's allocation granularity twice over.
const PAGES: usize = 4 << 20;
/// The control's margin: a gibibyte, more than a context takes.
const GIBIBYTE: usize = 1 << 30;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    ask(rec, PAGES)
}
// ANCHOR_END: run

// ANCHOR: margin
/// The control: the same request, a gibibyte less.
pub fn margin(rec: &mut Recorder) -> anyhow::Result<()> {
    ask(rec, GIBIBYTE)
}
// ANCHOR_END: margin

fn ask(rec: &mut Recorder, margin: usize) -> anyhow::Result<()> {
    if let Some(done) = worker::neighbour(rec) {
        return done;
    }
    if casebook_model::reduced_for_sanitizer(rec) {
        // The tool's own memory shares the GPU, and it would instrument the
        // neighbour's near-whole request too: nothing to read here.
        return Ok(());
    }
    // This process makes no context: nvidia-smi's figure is the GPU's with
    // nothing on it but what the driver keeps.
    let free = device::nvidia_smi_free_bytes()? as usize;
    device::measure_bytes(rec, NVIDIA_SMI_FREE, free);
    device::measure_bytes(rec, LEFT_OUT_OF_THE_REQUEST, margin);
    let request = free.checked_sub(margin).ok_or_else(|| {
        anyhow::anyhow!("nvidia-smi reports {free} bytes free, less than the margin")
    })?;
    let served = worker::neighbour_allocates(rec, request)?;
    rec.fact(
        A_NEW_PROCESS_GETS_NVIDIA_SMI_S_FREE_MEMORY_LESS_THE_MARGIN,
        served,
    );
    Ok(())
}
