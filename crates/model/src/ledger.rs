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
