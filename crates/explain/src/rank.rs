//! Ranking the cases against a pasted text.
//!
//! A case's features are the union of its texts' features. A feature shared
//! by few cases weighs more: `ln(1 + cases / cases holding it)`, so a
//! `CUBLAS_STATUS_ALLOC_FAILED` outweighs a generic "out of memory". A text
//! of a case scores the sum of the weights of the features it shares with
//! the pasted text, those of the first error in it (the likely cause)
//! counting twice; a case scores as its best text, so a case that cites
//! many threads gains nothing from their number. A case matches when its
//! score reaches [`MIN_SCORE`]. The book's page runs
//! the same ranking (`docs/src/explain/explain.js`).

use std::collections::{BTreeMap, BTreeSet};

use crate::features::{self, Token};
use crate::index::{Case, Index};

/// The least score that makes a match: one phrase or name that only a few
/// cases hold, or several that many hold.
pub const MIN_SCORE: f64 = 2.5;

/// How much the features of the first error weigh against those after it.
pub const FIRST_ERROR_WEIGHT: f64 = 2.0;

pub struct Ranker<'a> {
    pub index: &'a Index,
    /// Each case's texts' features.
    text_features: Vec<Vec<BTreeSet<String>>>,
    weight: BTreeMap<String, f64>,
}

/// One case that matched, with what matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked<'a> {
    pub case: &'a Case,
    pub score: f64,
    /// The error names and message fragments of the text that matched, in
    /// the order they appear in it.
    pub matched: Vec<String>,
}

/// An error the text shows, in the order it shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorLine {
    pub line: String,
    pub features: BTreeSet<String>,
}

impl<'a> Ranker<'a> {
    pub fn new(index: &'a Index) -> Self {
        let text_features: Vec<Vec<BTreeSet<String>>> = index
            .cases
            .iter()
            .map(|c| {
                c.texts
                    .iter()
                    .map(|t| features::features(&t.text))
                    .collect()
            })
            .collect();
        let mut holders: BTreeMap<String, usize> = BTreeMap::new();
        for texts in &text_features {
            let case: BTreeSet<&String> = texts.iter().flatten().collect();
            for f in case {
                *holders.entry(f.clone()).or_default() += 1;
            }
        }
        let n = index.cases.len().max(1) as f64;
        let weight = holders
            .into_iter()
            .map(|(f, k)| (f, (1.0 + n / k as f64).ln()))
            .collect();
        Ranker {
            index,
            text_features,
            weight,
        }
    }

    /// The weight of a feature, 0 where no case holds it.
    pub fn weight(&self, feature: &str) -> f64 {
        self.weight.get(feature).copied().unwrap_or(0.0)
    }

    /// The lines of `text` that hold a feature some case holds, in order,
    /// each error once: the first is the likely cause.
    pub fn errors(&self, text: &str) -> Vec<ErrorLine> {
        let mut out: Vec<ErrorLine> = Vec::new();
        for line in features::without_frames(text) {
            let f: BTreeSet<String> = features::line_features(line)
                .into_iter()
                .filter(|f| self.weight.contains_key(f))
                .collect();
            if f.is_empty() || out.iter().any(|e| e.features == f) {
                continue;
            }
            out.push(ErrorLine {
                line: line.trim().to_owned(),
                features: f,
            });
        }
        out
    }

    /// Every matching case, best first (ties by catalogue order).
    pub fn rank(&self, text: &str) -> Vec<Ranked<'a>> {
        let tokens = features::tokens(text);
        let mut query = features::features_of(&tokens);
        query.extend(features::figures(text));
        let first: BTreeSet<String> = self
            .errors(text)
            .into_iter()
            .next()
            .map(|e| e.features)
            .unwrap_or_default();
        let mut ranked: Vec<(usize, Ranked<'a>)> = Vec::new();
        let score_of = |shared: &BTreeSet<&String>| -> f64 {
            shared
                .iter()
                .map(|f| {
                    let boost = if first.contains(*f) {
                        FIRST_ERROR_WEIGHT
                    } else {
                        1.0
                    };
                    self.weight(f) * boost
                })
                .sum()
        };
        for (i, (case, texts)) in self.index.cases.iter().zip(&self.text_features).enumerate() {
            // The best text; the first of equals.
            let mut best: Option<(f64, BTreeSet<&String>)> = None;
            for own in texts {
                let shared: BTreeSet<&String> = query.intersection(own).collect();
                let score = score_of(&shared);
                if best.as_ref().is_none_or(|(b, _)| score > *b) {
                    best = Some((score, shared));
                }
            }
            let Some((score, shared)) = best else {
                continue;
            };
            if score >= MIN_SCORE {
                ranked.push((
                    i,
                    Ranked {
                        case,
                        score,
                        matched: matched_spans(&tokens, &shared)
                            .into_iter()
                            .map(|m| as_written(text, &m).unwrap_or(m))
                            .collect(),
                    },
                ));
            }
        }
        ranked.sort_by(|(ia, a), (ib, b)| b.score.total_cmp(&a.score).then(ia.cmp(ib)));
        ranked.into_iter().map(|(_, r)| r).collect()
    }
}

/// The words of the text covered by shared features, as maximal phrases,
/// and the shared identifiers, each once, in the order the text has them.
fn matched_spans(tokens: &[Token], shared: &BTreeSet<&String>) -> Vec<String> {
    let mut covered = vec![false; tokens.len()];
    let mut identifier = vec![false; tokens.len()];
    let mut run: Vec<usize> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::Word(w) => {
                let lower = w.to_ascii_lowercase();
                if shared.contains(&format!("id:{lower}")) {
                    identifier[i] = true;
                }
                run.push(i);
                if run.len() >= 3 {
                    let tri = &run[run.len() - 3..];
                    let key = format!(
                        "w:{}",
                        tri.iter()
                            .map(|&j| word(&tokens[j]).to_ascii_lowercase())
                            .collect::<Vec<_>>()
                            .join(" ")
                    );
                    if shared.contains(&key) {
                        for &j in tri {
                            covered[j] = true;
                        }
                    }
                }
            }
            Token::Break => run.clear(),
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut phrase: Vec<&str> = Vec::new();
    let flush = |phrase: &mut Vec<&str>, out: &mut Vec<String>| {
        if !phrase.is_empty() {
            let p = phrase.join(" ");
            if !out.contains(&p) {
                out.push(p);
            }
            phrase.clear();
        }
    };
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::Word(w) if covered[i] => phrase.push(w),
            Token::Word(w) => {
                flush(&mut phrase, &mut out);
                if identifier[i] && !out.contains(w) {
                    out.push(w.clone());
                }
            }
            Token::Break => flush(&mut phrase, &mut out),
        }
    }
    flush(&mut phrase, &mut out);
    out
}

/// The stretch of `text` that holds the phrase's words in order with only
/// punctuation and spaces between them: the phrase as the user wrote it.
fn as_written(text: &str, phrase: &str) -> Option<String> {
    let words: Vec<&str> = phrase.split(' ').collect();
    let first = words.first()?;
    let mut from = 0;
    while let Some(at) = text[from..].find(first) {
        let start = from + at;
        let mut end = start + first.len();
        let mut ok = true;
        for w in &words[1..] {
            let rest = &text[end..];
            let skip = rest
                .find(|c: char| c.is_ascii_alphanumeric() || c == '_')
                .unwrap_or(rest.len());
            let between = &rest[..skip];
            if between.contains('\n') || !rest[skip..].starts_with(w) {
                ok = false;
                break;
            }
            end += skip + w.len();
        }
        if ok {
            return Some(text[start..end].to_owned());
        }
        from = start + first.len();
    }
    None
}

fn word(t: &Token) -> &str {
    match t {
        Token::Word(w) => w,
        Token::Break => "",
    }
}
