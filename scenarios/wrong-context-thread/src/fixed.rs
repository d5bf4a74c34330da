//! Two fixes. `bind`: the worker thread makes the context current
//! (cudarc's `bind_to_thread`, cuCtxSetCurrent) before its driver calls.
//! `safe-api`: it goes through cudarc's safe API, which binds the context
//! before every call it makes.

use casebook_driver::device;
use casebook_model::Recorder;
use cudarc::driver::DriverError;

use crate::{on_a_new_thread, thread_allocates};

// ANCHOR: bind
pub fn bind(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let shared = ctx.clone();
    on_a_new_thread(rec, move |calls| {
        let bound = shared.bind_to_thread(); // FIX: cuCtxSetCurrent on this thread
        calls.push(("cuCtxSetCurrent", bound));
        thread_allocates(calls)
    })?;
    Ok(())
}
// ANCHOR_END: bind

// ANCHOR: safe_api
pub fn safe_api(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let stream = ctx.default_stream();
    on_a_new_thread(rec, move |calls| {
        // FIX: every safe call binds the stream's context first.
        let buf = stream.alloc_zeros::<u8>(1 << 20);
        let ok = buf.is_ok();
        calls.push(("CudaStream::alloc_zeros", buf.map(drop)));
        Ok::<bool, DriverError>(ok)
    })?;
    Ok(())
}
// ANCHOR_END: safe_api
