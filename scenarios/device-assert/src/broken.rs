//! The lookup is launched with an index past the table's end. The kernel's
//! assert fails; the process then drops the lookup's buffers and goes on.
//! Last, it does what the driver's documentation asks: it destroys the
//! context (the primary context's reset) and tries again in a new one.

use casebook_driver::device;
use casebook_model::Recorder;

use crate::{
    destroy_and_retry, gather, indices, later_call, lookup, lookup_and_check, parked, relaunched,
};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    lookup_then_retry(rec, true)
}
// ANCHOR_END: run

// ANCHOR: in_range
/// The control: the same program, every index in range, so the reset,
/// the context of its own and the new process come after a lookup that
/// worked.
pub fn in_range(rec: &mut Recorder) -> anyhow::Result<()> {
    lookup_then_retry(rec, false)
}
// ANCHOR_END: in_range

// ANCHOR: lookup_then_retry
fn lookup_then_retry(rec: &mut Recorder, past_the_end: bool) -> anyhow::Result<()> {
    if let Some(done) = relaunched(rec) {
        return done;
    }
    let ctx = device::context(rec)?;
    let gather = gather(rec, &ctx)?;
    if past_the_end {
        // BUG: the indices go to the kernel unchecked; one is past the
        // table's end. The lookup's buffers are dropped as it returns the
        // error: each Drop frees its buffer, meets the error, and has no
        // way to return it.
        let _ = lookup(rec, &ctx, &gather, &indices(true));
    } else {
        // in-range: every index valid, the result checked.
        lookup_and_check(rec, &ctx, &gather, &indices(false))?;
    }
    parked(rec, &ctx);
    later_call(rec);

    destroy_and_retry(rec, &ctx);
    // The context these hold was destroyed under them; let the process end
    // without running their destructors against it.
    std::mem::forget(gather);
    std::mem::forget(ctx);
    crate::relaunch(rec);
    Ok(())
}
// ANCHOR_END: lookup_then_retry
