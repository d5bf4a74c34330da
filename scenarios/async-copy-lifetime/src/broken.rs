//! The buffer is overwritten right after the copy call returns. The call
//! only queued the copy, behind a kernel that is still running, so notice
//! what the device ends up holding.

use casebook_model::Recorder;

use crate::{OVERWRITTEN, Pinned, SENT, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let (_ctx, gpu) = setup(rec)?;
    let mut host = Pinned::new(rec)?;
    host.as_mut_slice().fill(SENT);
    gpu.hold_stream(rec)?;
    gpu.copy(rec, host.as_mut_slice())?;
    // BUG: the buffer is reused while the copy from it is still queued.
    host.as_mut_slice().fill(OVERWRITTEN);
    // ANCHOR_END: run
    gpu.finish(rec, host.as_mut_slice())
}
