//! The main thread retains the primary context and makes it current; a
//! worker thread then makes a raw driver call (cudarc's `result` layer,
//! which, unlike its safe API, binds nothing) with no context current.

use std::sync::Arc;

use casebook_driver::device;
use casebook_model::Recorder;
use cudarc::driver::CudaContext;

use crate::{on_a_new_thread, thread_allocates};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx: Arc<CudaContext> = device::context(rec)?; // current on this thread only
    on_a_new_thread(rec, move |calls| {
        // BUG: nothing makes a context current on this thread.
        thread_allocates(calls)
    })?;
    drop(ctx);
    Ok(())
}
// ANCHOR_END: run
