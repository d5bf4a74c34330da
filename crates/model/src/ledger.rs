//! Claims of the seed articles that no scenario decides (yet): the rest of
//! the claims ledger. Those a scenario tests are declared with it, as
//! [`Claim`](crate::Claim)s, and judged from what ran.

/// A claim the catalogue does not decide, and why.
#[derive(Debug, Clone, Copy)]
pub struct Undecided {
    pub id: &'static str,
    pub seed: &'static str,
    /// The exact quote.
    pub quote: &'static str,
    pub why: Why,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// It cannot be tested here; the reason.
    Untestable(&'static str),
    /// It can be, by the scenario named, which is not in the catalogue yet.
    NotYetTested(&'static str),
}

/// Where a claim of the ledger stands: a run's verdict, or why no run
/// decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Confirmed,
    Refuted,
    Partly,
    /// Decided by a run whose verdict is still to come: the claim's
    /// experiment is written and waits for the GPU.
    Run,
    NotYetTested,
    Untestable,
}

impl Standing {
    pub fn words(self) -> &'static str {
        match self {
            Standing::Confirmed => "confirmed",
            Standing::Refuted => "refuted",
            Standing::Partly => "partly",
            Standing::Run => "decided by its run",
            Standing::NotYetTested => "not yet tested",
            Standing::Untestable => "untestable",
        }
    }
}

/// A change of a claim's standing in the ledger, and why: the ledger's
/// history is a list of these, oldest first, and the page of the history
/// is made from it.
#[derive(Debug, Clone, Copy)]
pub struct Change {
    pub id: &'static str,
    /// The commit whose code or run made the change.
    pub commit: &'static str,
    pub from: Standing,
    pub to: Standing,
    pub why: &'static str,
}
