//! The first phase ends by releasing the cache. Once while its blocks are
//! still referenced (as the seed's model and data are): nothing is released.
//! Then after they are freed: everything is.

use casebook_model::Recorder;

use crate::{RELEASES_CACHED, RELEASES_LIVE};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::run(rec, |rec, alloc, blocks, bytes| {
        let live = alloc.empty_cache(rec)?; // the blocks are still referenced
        rec.fact(RELEASES_LIVE, live > 0);
        for ptr in blocks {
            alloc.free(ptr, bytes);
        }
        let cached = alloc.empty_cache(rec)?; // FIX: release the cache between phases
        rec.fact(RELEASES_CACHED, cached > 0);
        Ok(())
    })
}
