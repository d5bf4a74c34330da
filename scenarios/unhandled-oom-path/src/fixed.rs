//! Each layer's activations are a cudarc `CudaSlice`. When an allocation
//! fails, returning drops `layers`, which frees what the attempt had, and
//! the halved batch fits.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::DriverError;

use crate::{LAYERS, Model, drive};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, attempt)
}

// ANCHOR: attempt
fn attempt(rec: &mut Recorder, m: &Model, batch: usize) -> Result<(), DriverError> {
    let bytes = m.layer_bytes(batch);
    let mut layers = Vec::new();
    for _ in 0..LAYERS {
        // FIX: on failure, returning drops `layers`, freeing every layer in it.
        layers.push(rec.tolerate("cuMemAllocAsync (layer activations)", unsafe {
            m.stream.alloc::<u8>(bytes)
        })?);
    }
    for layer in &mut layers {
        rec.step(
            "cuMemsetD8Async (forward pass)",
            m.stream.memset_zeros(layer),
        )?;
    }
    rec.step("cuStreamSynchronize", m.stream.synchronize())?;
    Ok(())
}
// ANCHOR_END: attempt
