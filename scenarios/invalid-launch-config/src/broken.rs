//! A batch of 65536 rows, one block row each: one more than a grid's y
//! dimension holds. The launch is refused; the same kernel with 65535 rows,
//! launched after it in the same process, runs.

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
    let right = launched.is_ok() && rows.right(rec, MAX_ROWS + 1)?;
    rec.check(RESULTS_RIGHT, right);
    // The largest batch this kernel's grid holds, in the same process.
    let at_limit = add_rows(rec, &rows, "later: add_row", MAX_ROWS, MAX_ROWS);
    let at_limit_right = at_limit.is_ok() && rows.right(rec, MAX_ROWS)?;
    rec.fact(AT_LIMIT_RUNS, at_limit_right);
    Ok(())
}

/// The rows a grid's y dimension holds (cudaDevAttrMaxGridDimY).
pub(crate) const MAX_ROWS: u32 = 65535;
