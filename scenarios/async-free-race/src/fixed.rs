//! A waits on an event recorded on B after the reading kernel, then frees.
//! The free, and so the reuse, now come after B's read.

use casebook_driver::RecordSteps;
use casebook_driver::device::{event, stream};
use casebook_model::Recorder;
use cudarc::driver::{result, sys};

use crate::Streams;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, one_run)
}

// ANCHOR: one_run
fn one_run(rec: &mut Recorder, s: &Streams) -> anyhow::Result<(bool, bool)> {
    let x = s.given(rec)?;
    s.read_on_b(rec, x)?;
    // FIX: A waits for B's kernel before it frees.
    let read_done = event::create(rec)?;
    // SAFETY: a live event and stream; the event is destroyed below.
    unsafe { event::record(rec, "cuEventRecord (B)", read_done, s.b.cu_stream())? };
    // SAFETY: the same live event, and A's live stream.
    unsafe {
        stream::wait_event(
            rec,
            "cuStreamWaitEvent (A)",
            s.a.cu_stream(),
            read_done,
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )?
    };
    rec.step("cuMemFreeAsync (A)", unsafe {
        result::free_async(x, s.a.cu_stream())
    })?;
    let y = s.next_owner(rec)?;
    let ok = s.reader_saw_given(rec)?;
    rec.step("cuMemFreeAsync (A)", unsafe {
        result::free_async(y, s.a.cu_stream())
    })?;
    // SAFETY: stream A's wait is enqueued; the event is not used again.
    unsafe { event::destroy(rec, read_done)? };
    Ok((ok, y == x))
}
// ANCHOR_END: one_run
