//! The first phase ends by freeing its blocks, to the allocator's cache.
//! Allocated is zero; reserved is the whole phase.

use casebook_model::Recorder;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::run(rec, |_rec, alloc, blocks, bytes| {
        for ptr in blocks {
            alloc.free(ptr, bytes);
        }
        Ok(()) // BUG: the cache keeps every byte reserved
    })
}
