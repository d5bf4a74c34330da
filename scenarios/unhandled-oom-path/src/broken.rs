//! Each layer's activations are a raw allocation. When a later layer's
//! allocation fails, `?` returns the error to the retry loop, and the layers
//! already allocated are simply forgotten.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::{DriverError, result};

use crate::{LAYERS, Model, drive};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    drive(rec, attempt)
}

// ANCHOR: attempt
fn attempt(rec: &mut Recorder, m: &Model, batch: usize) -> Result<(), DriverError> {
    let bytes = m.layer_bytes(batch);
    let mut layers = Vec::new();
    for _ in 0..LAYERS {
        // BUG: if this fails, the layers already in `layers` are never freed.
        layers.push(rec.tolerate("cuMemAlloc (layer activations)", unsafe {
            result::malloc_sync(bytes)
        })?);
    }
    for &layer in &layers {
        rec.step("cuMemsetD8 (forward pass)", unsafe {
            result::memset_d8_sync(layer, 0, bytes)
        })?;
    }
    for layer in layers {
        rec.step("cuMemFree", unsafe { result::free_sync(layer) })?;
    }
    Ok(())
}
// ANCHOR_END: attempt
