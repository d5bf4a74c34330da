//! A batch of 65536 rows, one block row each: one more than a grid's y
//! dimension holds. The launch is refused and writes nothing; the same
//! kernel with 65535 rows, launched after it in the same process, runs. The
//! same rows on the grid's z dimension read the same.

use casebook_driver::prelude::*;

use crate::names::*;
use crate::{Rows, add_rows, message};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let rows = Rows::setup(rec)?;
    // BUG: one block row per row of the batch; a grid has at most 65535.
    let launched = add_rows(rec, &rows, "add_row", MAX_ROWS + 1, MAX_ROWS + 1);
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
    let at_limit = add_rows(rec, &rows, "later: add_row", MAX_ROWS, MAX_ROWS);
    let at_limit_right = at_limit.is_ok() && rows.right(rec, MAX_ROWS)?;
    rec.fact(AT_LIMIT_RUNS, at_limit_right);
    // The same rows on the grid's z dimension, whose limit is the same.
    let z_over = add_rows(rec, &rows, "later: add_row_z", MAX_ROWS + 1, MAX_ROWS + 1);
    rec.fact(Z_OVER_LIMIT_RUNS, z_over.is_ok());
    let z_at = add_rows(rec, &rows, "later: add_row_z", MAX_ROWS, MAX_ROWS);
    let z_at_right = z_at.is_ok() && rows.right(rec, MAX_ROWS)?;
    rec.fact(Z_AT_LIMIT_RUNS, z_at_right);
    Ok(())
}

/// The rows a grid's y dimension holds (cudaDevAttrMaxGridDimY).
pub(crate) const MAX_ROWS: u32 = 65535;
