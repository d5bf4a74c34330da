//! What a trial amounts to, as values: whether it met its declaration, and
//! the verdicts of the claims it decides. The judges that compute them are
//! the runner's; whoever reads a report reads these, never words.

use casebook_model::ClaimVerdict;
use serde::{Deserialize, Serialize};

/// Whether a trial showed what its variant declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

impl Verdict {
    /// `pass` or `fail`, as the report's JSON writes it.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
        }
    }

    /// As the table prints it: `pass`, or `FAIL` to stand out.
    pub fn shown(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
        }
    }
}

/// The verdict of one claim, decided by the trial that judges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimResult {
    pub id: String,
    pub verdict: ClaimVerdict,
}
