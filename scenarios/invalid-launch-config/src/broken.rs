//! A batch of 65536 rows, one block row each: one more than a grid's y
//! dimension holds. The launch is refused and writes nothing; the same
//! kernel with 65535 rows, launched after it in the same process, runs. The
//! same rows on the grid's z dimension read the same. The output is filled
//! with -1 again before each launch, so each reading is that launch's own.

use casebook_driver::prelude::*;

use crate::names::*;
use crate::{Kernel, Rows, add_rows, message};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut rows = Rows::setup(rec)?;
    // BUG: one block row per row of the batch; a grid has at most 65535.
    let launched = add_rows(rec, &rows, Kernel::Row, MAX_ROWS + 1, MAX_ROWS + 1, false);
    // ANCHOR_END: run
    if let Err(e) = &launched {
        rec.fact(MESSAGE, message(e));
    }
    rec.fact(OVER_LIMIT_RUNS, launched.is_ok());
    if launched.is_err() {
        let untouched = rows.untouched(rec, MAX_ROWS + 1)?;
        rec.fact(NOTHING_RAN, untouched);
    }
    let right = launched.is_ok() && rows.right(rec, MAX_ROWS + 1)?;
    rec.check(RESULTS_RIGHT, right);
    // The largest batch this kernel's grid holds, in the same process.
    let y_at = at_limit(rec, &mut rows, Kernel::Row)?;
    rec.fact(AT_LIMIT_RUNS, y_at);
    // The same rows on the grid's z dimension, whose limit is the same.
    rows.clear(rec)?;
    let z_over = add_rows(rec, &rows, Kernel::RowZ, MAX_ROWS + 1, MAX_ROWS + 1, true);
    rec.fact(Z_OVER_LIMIT_RUNS, z_over.is_ok());
    let z_at = at_limit(rec, &mut rows, Kernel::RowZ)?;
    rec.fact(Z_AT_LIMIT_RUNS, z_at);
    Ok(())
}

/// Whether `kernel` runs over the largest batch a grid dimension holds,
/// launched later in the process onto a cleared output, its output right.
fn at_limit(rec: &mut Recorder, rows: &mut Rows, kernel: Kernel) -> anyhow::Result<bool> {
    rows.clear(rec)?;
    let launched = add_rows(rec, rows, kernel, MAX_ROWS, MAX_ROWS, true);
    Ok(launched.is_ok() && rows.right(rec, MAX_ROWS)?)
}

/// The rows a grid's y dimension holds (cudaDevAttrMaxGridDimY).
pub(crate) const MAX_ROWS: u32 = 65535;
