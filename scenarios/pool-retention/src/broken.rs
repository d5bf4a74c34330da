//! The pool's release threshold raised so that a later phase reuses the
//! memory without re-mapping it; the phase ends with its frees and a
//! synchronise, and nothing else. The pool keeps the memory.

use casebook_model::Recorder;

use crate::Threshold;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::run(rec, [Threshold::Default, Threshold::Raised], |_, _| Ok(())) // BUG: the phase is over; the pool still holds its memory
}
