//! The whole batch goes to the device in one allocation. It is larger than
//! the free memory, so it fails, cleanly: a small allocation right after
//! succeeds.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::result;

use crate::{USABLE, setup};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let s = setup(rec)?;
    let batch = rec.step("cuMemAlloc (the whole batch)", unsafe {
        result::malloc_sync(s.data_bytes)
    }); // BUG
    let small = rec.step("cuMemAlloc (64 MiB, after)", unsafe {
        result::malloc_sync(64 << 20)
    });
    rec.fact(USABLE, small.is_ok());
    if let Ok(small) = small {
        rec.step("cuMemFree", unsafe { result::free_sync(small) })?;
    }
    s.release(rec)?;
    batch?;
    Ok(())
}
// ANCHOR_END: run
