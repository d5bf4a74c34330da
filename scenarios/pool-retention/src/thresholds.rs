//! The controls of the claims about what the pool keeps: broken with one
//! phase's release threshold changed, so that both phases run at the same
//! one. At the default in both, nothing is kept; raised in both, the pool
//! keeps the freed memory after the first phase too.

use casebook_model::Recorder;

use crate::Threshold;

// ANCHOR: default_both
/// The second phase at the default threshold, as the first.
pub fn default_both(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::run(rec, [Threshold::Default, Threshold::Default], |_, _| Ok(()))
}
// ANCHOR_END: default_both

// ANCHOR: raised_both
/// The first phase with the threshold raised, as the second.
pub fn raised_both(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::run(rec, [Threshold::Raised, Threshold::Raised], |_, _| Ok(()))
}
// ANCHOR_END: raised_both
