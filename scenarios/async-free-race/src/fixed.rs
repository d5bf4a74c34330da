//! A waits on an event recorded on B after the reading kernel, then frees.
//! The free, and so the reuse, now come after B's read.

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
    let read_done = rec.step(
        "cuEventCreate",
        result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING),
    )?;
    rec.step("cuEventRecord (B)", unsafe {
        result::event::record(read_done, s.b.cu_stream())
    })?;
    rec.step("cuStreamWaitEvent (A)", unsafe {
        result::stream::wait_event(
            s.a.cu_stream(),
            read_done,
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    })?;
    rec.step("cuMemFreeAsync (A)", unsafe {
        result::free_async(x, s.a.cu_stream())
    })?;
    let y = s.next_owner(rec)?;
    let ok = s.reader_saw_given(rec)?;
    rec.step("cuMemFreeAsync (A)", unsafe {
        result::free_async(y, s.a.cu_stream())
    })?;
    rec.step("cuEventDestroy", unsafe {
        result::event::destroy(read_done)
    })?;
    Ok((ok, y == x))
}
// ANCHOR_END: one_run
