//! The indices are checked on the host, where a bad one is an ordinary
//! error the program can report; the lookup runs only on valid indices.

use casebook_driver::device;
use casebook_model::Recorder;

use crate::names::*;
use crate::{TABLE_LEN, destroy_and_retry, gather, indices, later_call, lookup_and_check, parked};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let gather = gather(rec, &ctx)?;
    // FIX: validate on the host, before the kernel can assert.
    let valid = |index: &[i32]| index.iter().all(|&k| (0..TABLE_LEN).contains(&k));
    rec.check(REJECTED_ON_HOST, !valid(&indices(true)));
    let index = indices(false);
    if valid(&index) {
        lookup_and_check(rec, &ctx, &gather, &index)?;
    }
    parked(rec, &ctx);
    later_call(rec);
    // The same ending as broken's: the context destroyed, a call in a new one.
    destroy_and_retry(rec, &ctx);
    std::mem::forget(gather);
    std::mem::forget(ctx);
    Ok(())
}
// ANCHOR_END: run
