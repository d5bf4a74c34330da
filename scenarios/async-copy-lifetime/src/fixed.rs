//! An event is recorded after the copy, and the host waits for it before
//! it reuses the buffer.

use casebook_driver::device::event;
use casebook_model::Recorder;

use crate::{OVERWRITTEN, Pinned, SENT, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let (_ctx, gpu) = setup(rec)?;
    let mut host = Pinned::new(rec)?;
    host.as_mut_slice().fill(SENT);
    gpu.hold_stream(rec)?;
    gpu.copy(rec, host.as_mut_slice())?;
    // FIX: the buffer is reused only once the copy from it is done.
    let copied = event::create(rec)?;
    // SAFETY: a live event and stream; the event is destroyed below.
    unsafe {
        event::record(rec, "cuEventRecord", copied, gpu.stream.cu_stream())?;
        event::synchronize(rec, copied)?;
    }
    host.as_mut_slice().fill(OVERWRITTEN);
    // ANCHOR_END: run
    // SAFETY: nothing waits on the event any more.
    unsafe { event::destroy(rec, copied)? };
    gpu.finish(rec, host.as_mut_slice())
}
