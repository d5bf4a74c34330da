//! The broken program with a pageable source (a Vec): the driver stages
//! pageable memory before the call returns, so the reuse comes too late to
//! change what the device receives.

use casebook_model::Recorder;

use crate::{OVERWRITTEN, SENT, WORDS, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let (_ctx, gpu) = setup(rec)?;
    let mut host = vec![SENT; WORDS]; // pageable memory
    gpu.hold_stream(rec)?;
    gpu.copy(rec, &host)?;
    host.fill(OVERWRITTEN); // the same reuse as the broken program's
    // ANCHOR_END: run
    gpu.finish(rec, &host)
}
