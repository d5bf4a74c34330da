//! Each case's own words: the words of its title, cause and fix, and the
//! words that two or more of the sources of its texts use (two threads, or a
//! thread and the run), where at most [`OWN_WORD_CASES`] cases have the word
//! so. "loss" and "graph" are kept-loss-graphs' words, "retry" and "catching"
//! unhandled-oom-path's; "memory", "process" and "training" belong to too many
//! cases to tell one from another.
//!
//! The ranking ([`crate::rank`]) orders cases that score the same (the dozen
//! a bare "out of memory" matches) by how much of their own words the text
//! holds. The book's page computes
//! the same words from the same index (`docs/src/explain/explain.js`).

use std::collections::{BTreeMap, BTreeSet};

use crate::features::{self, Token};
use crate::index::Index;

/// The most cases that may have a word for it to be their own.
pub const OWN_WORD_CASES: usize = 2;

/// A word as the vocabulary compares it: lowercased, a plural's ending
/// dropped ("losses" is "loss", "retries" "retry", "iterations"
/// "iteration"); none for a word that says nothing of a cause (a generic or
/// function word, two letters or fewer).
pub fn word(w: &str) -> Option<String> {
    let w = w.to_ascii_lowercase();
    if w.len() < 3
        || features::GENERIC_WORDS.contains(&w.as_str())
        || features::FUNCTION_WORDS.contains(&w.as_str())
        || features::GENERIC_IDENTIFIERS.contains(&w.as_str())
    {
        return None;
    }
    let singular = if w.len() > 4 && w.ends_with("ies") {
        format!("{}y", &w[..w.len() - 3])
    } else if w.ends_with("sses")
        || w.ends_with("ches")
        || w.ends_with("shes")
        || w.ends_with("xes")
    {
        w[..w.len() - 2].to_owned()
    } else if w.len() > 3 && w.ends_with('s') && !["ss", "us", "is"].iter().any(|e| w.ends_with(e))
    {
        w[..w.len() - 1].to_owned()
    } else {
        w
    };
    Some(singular)
}

/// The words of a text, each once, in the order it first has them: its
/// tokens' words ([`features::tokens`]: frames, figures, paths and
/// boilerplate gone), as [`word`] reads them.
pub fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in features::tokens(text) {
        if let Token::Word(w) = t
            && let Some(w) = word(&w)
            && !out.contains(&w)
        {
            out.push(w);
        }
    }
    out
}

/// Each case's words among `mine` (a set per case) that at most `most`
/// cases use, as `used` counts them (a set per case), each weighing
/// `ln(1 + cases / cases using it)`: the rarer, the heavier.
pub fn rare_words(
    mine: &[BTreeSet<String>],
    used: &[BTreeSet<String>],
    most: usize,
) -> Vec<BTreeMap<String, f64>> {
    let mut users: BTreeMap<&str, usize> = BTreeMap::new();
    for words in used {
        for w in words {
            *users.entry(w.as_str()).or_default() += 1;
        }
    }
    let n = used.len().max(1) as f64;
    mine.iter()
        .map(|words| {
            words
                .iter()
                .filter_map(|w| {
                    let k = users[w.as_str()];
                    (k <= most).then(|| (w.clone(), (1.0 + n / k as f64).ln()))
                })
                .collect()
        })
        .collect()
}

/// Every case's own words, with their weights.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    own: Vec<BTreeMap<String, f64>>,
}

impl Vocabulary {
    pub fn new(index: &Index) -> Self {
        let candidates: Vec<BTreeSet<String>> = index
            .cases
            .iter()
            .map(|case| case_words(case, &[&case.title, &case.cause, &case.fix], words))
            .collect();
        let own = rare_words(&candidates, &candidates, OWN_WORD_CASES);
        Vocabulary { own }
    }

    /// The case's own words among `words`, in their order.
    pub fn own_words_in<'w>(&self, case: usize, words: &'w [String]) -> Vec<&'w String> {
        words
            .iter()
            .filter(|w| self.own[case].contains_key(*w))
            .collect()
    }

    /// How much of the case's own words `words` holds: their weights'
    /// sum, in byte order of the words (the page sums in the same order).
    pub fn weight_in(&self, case: usize, words: &[String]) -> f64 {
        let mut found: Vec<&String> = self.own_words_in(case, words);
        found.sort();
        found.iter().map(|w| self.own[case][*w]).sum()
    }
}

/// The words of a case as `words` reads them: those of `fields` (its own
/// title, cause, fix and the like), and those two or more of the sources of
/// its texts use (two threads, or a thread and the run). A word one thread
/// uses may be that user's; a word two sources use is how the failure is
/// told.
pub fn case_words(
    case: &crate::index::Case,
    fields: &[&str],
    words: impl Fn(&str) -> Vec<String>,
) -> BTreeSet<String> {
    let mut mine: BTreeSet<String> = fields.iter().flat_map(|t| words(t)).collect();
    let mut sources: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for t in &case.texts {
        for w in words(&t.text) {
            sources.entry(w).or_default().insert(t.from.as_str());
        }
    }
    mine.extend(
        sources
            .into_iter()
            .filter(|(_, from)| from.len() >= 2)
            .map(|(w, _)| w),
    );
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_read_without_its_plural_and_generic_words_are_none() {
        assert_eq!(word("Losses").as_deref(), Some("loss"));
        assert_eq!(word("retries").as_deref(), Some("retry"));
        assert_eq!(word("iterations").as_deref(), Some("iteration"));
        assert_eq!(word("batches").as_deref(), Some("batch"));
        assert_eq!(word("process").as_deref(), Some("process"));
        assert_eq!(word("status").as_deref(), Some("status"));
        assert_eq!(word("CUDA"), None);
        assert_eq!(word("the"), None);
        assert_eq!(word("of"), None);
    }

    #[test]
    fn a_case_s_own_words_are_those_few_cases_have() {
        let index = Index::embedded().unwrap();
        let vocabulary = Vocabulary::new(&index);
        let case = |slug: &str| index.cases.iter().position(|c| c.scenario == slug).unwrap();
        let text = words("loss graph retry memory process");
        let kept = vocabulary.own_words_in(case("kept-loss-graphs"), &text);
        assert!(kept.contains(&&"loss".to_owned()), "{kept:?}");
        assert!(kept.contains(&&"graph".to_owned()), "{kept:?}");
        let retry = vocabulary.own_words_in(case("unhandled-oom-path"), &text);
        assert!(retry.contains(&&"retry".to_owned()), "{retry:?}");
        // Words many cases have are no case's own.
        for c in 0..index.cases.len() {
            for w in vocabulary.own_words_in(c, &text) {
                assert!(!["memory", "process"].contains(&w.as_str()));
            }
        }
    }
}
