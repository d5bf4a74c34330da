//! The held-out measure of `explain`: whole texts pasted in public threads
//! that no case cites (`crates/explain/tests/texts.toml`), each labelled
//! with the case its thread's cause is, or `none`.

use serde::Deserialize;

use crate::index::Index;
use crate::rank::{Ranked, Ranker};

/// Where the held-out texts live, relative to the repository root.
pub const TEXTS_TOML: &str = "crates/explain/tests/texts.toml";

/// The label of a text whose cause no case reproduces.
pub const NONE: &str = "none";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldOut {
    pub paste: Vec<Paste>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paste {
    /// `owner/repo#N`.
    pub report: String,
    /// The case's slug, or [`NONE`].
    pub expect: String,
    pub near_miss: bool,
    pub why: String,
    pub text: String,
}

pub fn parse(toml_text: &str) -> anyhow::Result<HeldOut> {
    Ok(toml::from_str(toml_text)?)
}

/// How the ranking did on the held-out texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Score {
    /// Texts labelled with a case of the index.
    pub covered: usize,
    /// Of those, the right case first, and among the first three.
    pub first: usize,
    /// Of those not first, the right case scored the same as the first:
    /// the text alone cannot put it ahead, and the answer says so.
    pub tied_first: usize,
    pub top3: usize,
    /// Texts labelled `none`, and of those, how many matched no reproduced
    /// case.
    pub uncovered: usize,
    pub no_match: usize,
    /// The texts that missed, as `report: expected -> got`.
    pub misses: Vec<String>,
}

pub fn evaluate(index: &Index, held: &HeldOut) -> Score {
    let ranker = Ranker::new(index);
    let mut s = Score {
        covered: 0,
        first: 0,
        tied_first: 0,
        top3: 0,
        uncovered: 0,
        no_match: 0,
        misses: Vec::new(),
    };
    for p in &held.paste {
        let ranked = ranker.rank(&p.text);
        let got = first_three(&ranked);
        let reproduced = ranked.iter().any(|r| r.case.reproduced);
        let shown = if got.is_empty() {
            "no match".to_owned()
        } else {
            got.join(", ")
        };
        if p.expect == NONE {
            s.uncovered += 1;
            // A known failure that is not reproduced here may match: the
            // answer is still "no reproduced case".
            if !reproduced {
                s.no_match += 1;
            } else {
                s.misses.push(format!("{}: none -> {shown}", p.report));
            }
            continue;
        }
        s.covered += 1;
        if got.first() == Some(&p.expect.as_str()) {
            s.first += 1;
        } else {
            let best = ranked.first().map(|r| r.score);
            if ranked
                .iter()
                .any(|r| r.case.scenario == p.expect && Some(r.score) == best)
            {
                s.tied_first += 1;
            }
            s.misses
                .push(format!("{}: {} -> {shown}", p.report, p.expect));
        }
        if got.contains(&p.expect.as_str()) {
            s.top3 += 1;
        }
    }
    s
}

impl Score {
    /// One line for the README and the book.
    pub fn summary(&self) -> String {
        format!(
            "of {} held-out texts whose cause a case reproduces, the right case came first for \
             {} (tied for first, as the answer says, for {} more) and among the first three \
             for {}; of {} whose cause no case reproduces, {} matched no reproduced case",
            self.covered, self.first, self.tied_first, self.top3, self.uncovered, self.no_match
        )
    }
}

/// The first three answers for every held-out text (`h<i>`) and every
/// indexed text (`x<case>.<text>`), a line each: what the book's page
/// writes in its self-test, for the book check to compare.
pub fn selftest_lines(index: &Index, held: &HeldOut) -> Vec<String> {
    let ranker = Ranker::new(index);
    let top3 = |text: &str| first_three(&ranker.rank(text)).join(",");
    let mut lines: Vec<String> = held
        .paste
        .iter()
        .enumerate()
        .map(|(i, p)| format!("h{i} {}", top3(&p.text)))
        .collect();
    for (ci, case) in index.cases.iter().enumerate() {
        for (ti, t) in case.texts.iter().enumerate() {
            lines.push(format!("x{ci}.{ti} {}", top3(&t.text)));
        }
    }
    lines
}

/// The slugs of the first three answers.
fn first_three<'a>(ranked: &[Ranked<'a>]) -> Vec<&'a str> {
    ranked
        .iter()
        .take(3)
        .map(|r| r.case.scenario.as_str())
        .collect()
}
