//! The same batch of 65536 rows on a grid of 65535 block rows, each striding
//! over the rows: any batch fits.

use casebook_driver::prelude::*;

use crate::broken::MAX_ROWS;
use crate::names::*;
use crate::{Kernel, Rows, add_rows};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let rows = Rows::setup(rec)?;
    // FIX: at most 65535 block rows, each striding over the batch's rows.
    let batch = MAX_ROWS + 1;
    add_rows(
        rec,
        &rows,
        Kernel::Strided,
        batch,
        batch.min(MAX_ROWS),
        false,
    )?;
    let right = rows.right(rec, batch)?;
    rec.check(RESULTS_RIGHT, right);
    Ok(())
}
// ANCHOR_END: run
