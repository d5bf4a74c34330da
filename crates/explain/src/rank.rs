//! Ranking the cases against a pasted text.
//!
//! A case's features are the union of its texts' features. A feature shared
//! by few cases weighs more: `ln(1 + cases / cases holding it)`, so a
//! `CUBLAS_STATUS_ALLOC_FAILED` outweighs a generic "out of memory". A text
//! of a case scores the sum of the weights of the features it shares with
//! the pasted text, those of the first error in it (the likely cause)
//! counting twice; a case scores as its best text, so a case that cites
//! many threads gains nothing from their number, except between cases whose
//! best texts score the same: then the one whose texts score more in all
//! comes first. A case matches when its score reaches [`MIN_SCORE`] and
//! what matched holds more than names: a function's or a kernel's name
//! ([`features::is_bare_name`], `cublas_gemm`) alone says where the program
//! was, not what failed. Where
//! the pasted text names an error (`CUDA_ERROR_LAUNCH_TIMEOUT`), the cases
//! whose best text names it too come first: an error's name is what it is,
//! and the words around it (a framework's "Call to … results in") only
//! where it was raised. Of cases that score the same, those reproduced on a
//! GPU come before known failures, and then they are ordered by how much
//! of their own words ([`crate::vocabulary`]) the text holds: "loss" and
//! "graph" lift kept-loss-graphs among the dozen cases a bare "out of
//! memory" matches, "retry" unhandled-oom-path. A phrase of a user's prose
//! tells a case only beside one of the case's own words: without them, "a
//! memory leak caused by" counts as "memory leak", for every case whose users
//! write it, and those cases tie. A CUDA call the text names
//! ([`features::is_api_name`]: `cudaMallocHost`, `cuCtxCreate`) that a case
//! names anywhere (its title, cause, fix or texts) counts for it beside its
//! best text, at [`API_NAME_WEIGHT`] of a rare feature's weight by the
//! cases that name it: users who tell a failure in prose name the calls,
//! not the error. The calls make a match only where the rest of the text
//! does not, and such a match comes after every other: a call named in one
//! case's fix does not reorder the cases the error's words match, nor
//! outrank a case that names the text's error. A call whose absence is the
//! case's failure ("cudaMallocHost without cudaFreeHost" in its title,
//! cause or texts, and nowhere made there) counts only where the text says
//! it is not made either. The book's page runs the same ranking
//! (`docs/src/explain/explain.js`).

use std::collections::{BTreeMap, BTreeSet};

use crate::description::{self, Description};
use crate::features::{self, Reading, Token};
use crate::index::{Case, Index};
use crate::vocabulary::{self, Vocabulary};

/// The least score that makes a match: one phrase or name that only a few
/// cases hold, or several that many hold.
pub const MIN_SCORE: f64 = 2.5;

/// How much the features of the first error weigh against those after it.
pub const FIRST_ERROR_WEIGHT: f64 = 2.0;

/// What a text of a case counts for when it names errors and the pasted
/// text names others, none of them the same: a different error that shares
/// the words around it (a TensorFlow preamble, an out-of-memory hint).
pub const OTHER_ERROR_WEIGHT: f64 = 0.5;

/// What a CUDA call the text and a case both name counts for, against a
/// feature as rare (`ln(1 + cases / cases naming it)`): one call only
/// one case names (4.0 at full weight) is not enough to match alone, two
/// are, and a call every other case names adds little.
pub const API_NAME_WEIGHT: f64 = 0.5;

/// How what matched shows the case's own words the text holds
/// (`{words}`), which order cases of the same score.
pub const OWN_WORDS_SAID: &str = "(words of this case: {words})";

pub struct Ranker<'a> {
    pub index: &'a Index,
    /// Each case's texts' features.
    text_features: Vec<Vec<BTreeSet<String>>>,
    weight: BTreeMap<String, f64>,
    vocabulary: Vocabulary,
    /// The features of the texts the cases' variants returned in the run:
    /// the runtime's and the libraries' own messages.
    run_features: BTreeSet<String>,
    /// The features some case's text holds in an error's message (a run's
    /// text, a line that says it reports an error or names one, a line of
    /// compute-sanitizer's report): what is not a user's prose.
    message_features: BTreeSet<String>,
    /// Each case's pairs of words that say what failed
    /// ([`features::content_pairs_of`]), over all its texts.
    said_pairs: Vec<BTreeSet<String>>,
    /// A pair's weight, by the cases that say it.
    pair_weight: BTreeMap<String, f64>,
    /// Each case's CUDA calls ([`features::api_mentions`]) in its title,
    /// cause, fix and texts.
    api_names: Vec<BTreeSet<String>>,
    /// Each case's calls whose absence is its failure: said not made in its
    /// title, cause or texts, and made nowhere there (its fix makes them).
    missing_calls: Vec<BTreeSet<String>>,
    /// A call's weight, by the cases that name it, times [`API_NAME_WEIGHT`].
    api_weight: BTreeMap<String, f64>,
    /// Each case's distinctive words ([`crate::description`]), what prose
    /// that shares no error text matches on.
    description: Description,
}

/// One case that matched, with what matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked<'a> {
    pub case: &'a Case,
    pub score: f64,
    /// The case's best text holds an error name the pasted text names: it
    /// comes before every case that matched only on the words around it.
    pub names_the_error: bool,
    /// It matched only with the CUDA calls the text names: it comes after
    /// every case that matched without them.
    pub by_calls: bool,
    /// No case matched on an error's words, and this one matched on the
    /// words of its description ([`crate::description`]): it comes after
    /// every case that matched on an error's words (there are none), and
    /// before those that matched on calls alone.
    pub by_description: bool,
    /// The error names and message fragments of the text that matched, in
    /// the order they appear in it.
    pub matched: Vec<String>,
    /// The case's own words the text holds ([`crate::vocabulary`]), in its
    /// order, and their weight: what orders cases of the same score.
    pub own_words: Vec<String>,
    pub own_weight: f64,
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
        let run_features = index
            .cases
            .iter()
            .zip(&text_features)
            .flat_map(|(c, texts)| c.texts.iter().zip(texts))
            .filter(|(t, _)| t.from == "run")
            .flat_map(|(_, f)| f.iter().filter(|x| !x.starts_with("fig:")).cloned())
            .collect();
        let mut message_features = BTreeSet::new();
        for case in &index.cases {
            for t in &case.texts {
                for line in features::without_frames(&t.text) {
                    let f = features::features(line);
                    // compute-sanitizer's report is a message, line by line.
                    let message = t.from == "run"
                        || line.trim_start().starts_with("=========")
                        || features::says_error(line)
                        || f.iter().any(|x| features::is_error_name(x));
                    if message {
                        message_features.extend(f);
                    }
                }
            }
        }
        let said_pairs: Vec<BTreeSet<String>> = index
            .cases
            .iter()
            .map(|c| {
                c.texts
                    .iter()
                    .flat_map(|t| features::content_pairs_of(&features::tokens(&t.text)))
                    .collect()
            })
            .collect();
        let pair_weight = weight_by_holders(&said_pairs, n, 1.0);
        // Each case's calls, read once: those its title, cause and texts
        // name (and whether they say the call is not made), and its fix's.
        let (api_names, missing_calls): (Vec<BTreeSet<String>>, Vec<BTreeSet<String>>) = index
            .cases
            .iter()
            .map(|c| {
                let told: Vec<(String, bool)> = [&c.title, &c.cause]
                    .into_iter()
                    .chain(c.texts.iter().map(|t| &t.text))
                    .flat_map(|t| features::api_mentions(t))
                    .collect();
                let missing = told
                    .iter()
                    .filter(|(f, missing)| *missing && !told.contains(&(f.clone(), false)))
                    .map(|(f, _)| f.clone())
                    .collect();
                let names = told
                    .into_iter()
                    .chain(features::api_mentions(&c.fix))
                    .map(|(f, _)| f)
                    .collect();
                (names, missing)
            })
            .unzip();
        let api_weight = weight_by_holders(&api_names, n, API_NAME_WEIGHT);
        Ranker {
            index,
            text_features,
            weight,
            vocabulary: Vocabulary::new(index),
            run_features,
            message_features,
            said_pairs,
            pair_weight,
            api_names,
            missing_calls,
            api_weight,
            description: Description::new(index),
        }
    }

    /// How many cases say a pair of words ([`features::content_pairs_of`]).
    fn sayers(&self, pair: &str) -> usize {
        self.said_pairs.iter().filter(|p| p.contains(pair)).count()
    }

    /// The features a pasted text is matched on.
    fn query(&self, text: &str, tokens: &[Token]) -> BTreeSet<String> {
        let mut query = features::features_of(tokens, Reading::Pasted);
        query.extend(features::figures(text));
        query.extend(features::xids(text));
        query
    }

    /// Whether the text is compute-sanitizer's report of an out-of-bounds
    /// access and no error of the runtime beside it: no error's name, no
    /// message a case's run returned ("an illegal memory access was
    /// encountered"). The report is a diagnosis already, of the kernel's
    /// own indexing, which no case reproduces as such; the words around it
    /// ("Invalid __global__ write of size", a user's "out-of-bounds") are
    /// every such report's, and would name a case that did not happen.
    pub fn only_an_out_of_bounds_access(&self, text: &str) -> bool {
        if !features::reports_an_out_of_bounds_access(text) {
            return false;
        }
        let query = self.query(text, &features::tokens(text));
        !query
            .iter()
            .any(|f| features::is_error_name(f) || self.run_features.contains(f))
    }

    /// The weight of a feature, 0 where no case holds it.
    pub fn weight(&self, feature: &str) -> f64 {
        self.weight.get(feature).copied().unwrap_or(0.0)
    }

    /// The errors of `text`, in order, each once: the first is the likely
    /// cause. An error starts at a line that says it is one (`…Error:`,
    /// `error:`, an assertion), or at a line that holds what some case
    /// holds; the lines right after it that say no new error but hold what
    /// a case holds continue it (a message wrapped over lines), and so does a
    /// line that only announces what follows ("Last error:"). A warning, an
    /// information line or a table's row ([`features::is_note`]) starts no
    /// error, and the lines that continue it belong to it, unless the text
    /// has no other error: a deprecation warning before the traceback is not
    /// the cause.
    pub fn errors(&self, text: &str) -> Vec<ErrorLine> {
        let errors = self.errors_noting(text, true);
        if errors.is_empty() {
            self.errors_noting(text, false)
        } else {
            errors
        }
    }

    /// [`errors`](Self::errors), with warnings and information lines passed
    /// over or read as errors.
    fn errors_noting(&self, text: &str, pass_notes: bool) -> Vec<ErrorLine> {
        /// What the lines before this one were in.
        #[derive(PartialEq)]
        enum In {
            Nothing,
            Error,
            Note,
        }
        let mut out: Vec<ErrorLine> = Vec::new();
        let mut within = In::Nothing;
        for line in features::without_frames(text) {
            // The user's code starts no error and continues none.
            if features::is_code(line) {
                within = In::Nothing;
                continue;
            }
            let f: BTreeSet<String> = features::line_features(line)
                .into_iter()
                .filter(|f| self.weight.contains_key(f))
                .collect();
            // A line that only announces what follows ("Last error:", as
            // NCCL writes before its reason) continues the error it is in.
            if line.trim().to_ascii_lowercase().ends_with("error:") {
                continue;
            }
            if pass_notes && features::is_note(line) {
                within = In::Note;
                continue;
            }
            let marked = features::says_error(line);
            // A figure (a device after the first, an out-of-memory message's
            // sizes) is a fact about an error, not one: it starts none, and a
            // line that holds only figures is no part of one.
            let telling = f.iter().any(|x| !x.starts_with("fig:"));
            if !marked && !telling {
                within = In::Nothing;
                continue;
            }
            if !marked && within == In::Note {
                continue;
            }
            if !marked && within == In::Error {
                if let Some(last) = out.last_mut() {
                    last.features.extend(f);
                }
                continue;
            }
            let trimmed = line.trim().to_owned();
            let repeated = out.iter().any(|e| {
                if f.is_empty() {
                    e.line == trimmed
                } else {
                    e.features == f
                }
            });
            within = if repeated { In::Nothing } else { In::Error };
            if !repeated {
                out.push(ErrorLine {
                    line: trimmed,
                    features: f,
                });
            }
        }
        out
    }

    /// Every matching case, best first (ties by catalogue order).
    pub fn rank(&self, text: &str) -> Vec<Ranked<'a>> {
        self.rank_with(text, &self.errors(text))
    }

    /// [`rank`](Self::rank), given the text's errors (as [`errors`](Self::errors)
    /// reads them), for a caller that has them already.
    pub fn rank_with(&self, text: &str, errors: &[ErrorLine]) -> Vec<Ranked<'a>> {
        // Another backend's out of memory (Apple's MPS, Intel's XPU) shares
        // CUDA's words and none of its causes.
        if self.only_an_out_of_bounds_access(text)
            || features::another_backend_s_out_of_memory(text)
        {
            return Vec::new();
        }
        // The user's code names what it calls, not what failed: the
        // phrases and words are read from the rest ([`features::is_code`]);
        // the calls it names still count as calls, its words as a
        // description's, and the devices it names as figures (`cuda:1`).
        // Where the text reports an error beside its warnings and
        // information lines ([`Self::errors`]), those say what ran, not
        // what failed: its phrases and words are read without them. A
        // table's rows give none in any text.
        let prose = features::without_code(text);
        let prose = if self.errors_noting(text, true).is_empty() {
            features::without_rows(&prose)
        } else {
            features::without_notes(&prose)
        };
        let tokens = features::tokens(&prose);
        let pasted_words = vocabulary::words(&prose);
        let query = self.query(text, &tokens);
        let mentions = features::api_mentions(text);
        let query_calls: BTreeSet<String> = mentions.iter().map(|(f, _)| f.clone()).collect();
        let query_missing: BTreeSet<&String> = mentions
            .iter()
            .filter(|(_, missing)| *missing)
            .map(|(f, _)| f)
            .collect();
        let empty = BTreeSet::new();
        let first: &BTreeSet<String> = errors.first().map_or(&empty, |e| &e.features);
        let mut ranked: Vec<(usize, f64, Ranked<'a>)> = Vec::new();
        let query_errors: BTreeSet<&String> = query
            .iter()
            .filter(|f| features::is_error_name(f))
            .collect();
        let score_of = |own: &BTreeSet<String>, shared: &BTreeSet<&String>| -> f64 {
            let names_others = !query_errors.is_empty()
                && own.iter().any(|f| features::is_error_name(f))
                && !query_errors.iter().any(|f| own.contains(*f));
            let factor = if names_others {
                OTHER_ERROR_WEIGHT
            } else {
                1.0
            };
            factor
                * shared
                    .iter()
                    .map(|f| {
                        let boost = if first.contains(*f) {
                            FIRST_ERROR_WEIGHT
                        } else {
                            1.0
                        };
                        self.weight(f) * boost
                    })
                    .sum::<f64>()
        };
        // A stretch of a user's prose ("a memory leak caused by") that a
        // case shares with the text, where the text holds none of the case's
        // own words, tells that case from no other: it holds a pair of
        // words ("memory leak") that several cases' users write, each in
        // their own sentence. It counts as the pair in it that most cases
        // say, for every case that says the pair, and they tie; their own
        // words order them.
        let mut told_pairs: BTreeSet<String> = BTreeSet::new();
        let mut found: Vec<(f64, f64, BTreeSet<&String>, Vec<String>)> = Vec::new();
        for (i, texts) in self.text_features.iter().enumerate() {
            let own_words: Vec<String> = self
                .vocabulary
                .own_words_in(i, &pasted_words)
                .into_iter()
                .cloned()
                .collect();
            // The best text (the first of equals), and all texts together:
            // where two cases' best texts tie, the case more of whose texts
            // users pasted or the run returned for this text comes first.
            let mut best: Option<(f64, BTreeSet<&String>)> = None;
            let mut total = 0.0;
            let mut prose_shared: BTreeSet<&String> = BTreeSet::new();
            for own in texts {
                let mut shared: BTreeSet<&String> = query.intersection(own).collect();
                if own_words.is_empty() {
                    shared.retain(|f| {
                        let prose = f.starts_with("w:") && !self.message_features.contains(*f);
                        if prose {
                            prose_shared.insert(*f);
                        }
                        !prose
                    });
                }
                let score = score_of(own, &shared);
                total += score;
                if best.as_ref().is_none_or(|(b, _)| score > *b) {
                    best = Some((score, shared));
                }
            }
            for span in matched_spans(&tokens, &prose_shared) {
                let words: Vec<String> = span.split(' ').map(|w| w.to_ascii_lowercase()).collect();
                // The most said, the first in byte order of equals.
                let pair = features::content_pairs(&words)
                    .into_iter()
                    .map(|p| (self.sayers(&p), p))
                    .min_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                told_pairs.extend(pair.map(|(_, p)| p));
            }
            let (score, shared) = best.unwrap_or_default();
            found.push((score, total, shared, own_words));
        }
        for (i, ((case, texts), (mut score, total, mut shared, own_words))) in self
            .index
            .cases
            .iter()
            .zip(&self.text_features)
            .zip(found)
            .enumerate()
        {
            let told = told_pairs
                .iter()
                .filter(|p| self.said_pairs[i].contains(*p))
                .filter_map(|p| query.get(p))
                .map(|p| {
                    let boost = if first.contains(p) {
                        FIRST_ERROR_WEIGHT
                    } else {
                        1.0
                    };
                    (p, self.pair_weight[p] * boost)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((p, w)) = told {
                shared.insert(p);
                score += w;
            }
            // What the text's figures say (one request larger than the GPU,
            // a reserve in pieces, …) is the case's where any of its texts
            // says it: figures are the message's numbers, not its words, and
            // the text whose words match best need not be the one whose
            // numbers do.
            // So with the error's name: the text's error is the case's where
            // any of its texts names it (the run returned it, or a user
            // pasted it), though the text whose words match best (a user's
            // assert line) need not name it.
            for f in query
                .iter()
                .filter(|f| f.starts_with("fig:") || features::is_error_name(f))
            {
                if !shared.contains(f) && texts.iter().any(|own| own.contains(f)) {
                    shared.insert(f);
                    let boost = if first.contains(f) {
                        FIRST_ERROR_WEIGHT
                    } else {
                        1.0
                    };
                    score += self.weight(f) * boost;
                }
            }
            // Names alone (a function's, a kernel's: `cublas_gemm`) say
            // where the text's program was, not what failed: what matched
            // must hold an error's name or a message's words.
            if shared.iter().all(|f| features::is_bare_name(f)) {
                shared.clear();
                score = 0.0;
            }
            // The CUDA calls the text names that the case names anywhere,
            // where its best text does not count them already; a call the
            // case's failure lacks, only where the text lacks it too. They
            // decide only where the rest of the text does not match the
            // case: among the cases its error's words match, a call named in
            // one's fix says nothing of which the text hit.
            let by_calls = score < MIN_SCORE;
            if by_calls {
                for f in query_calls.iter() {
                    let lacked = self.missing_calls[i].contains(f) && !query_missing.contains(f);
                    if !shared.contains(f) && self.api_names[i].contains(f) && !lacked {
                        shared.insert(f);
                        score += self.api_weight[f];
                    }
                }
            }
            if score >= MIN_SCORE {
                let names_the_error = shared.iter().any(|f| features::is_error_name(f));
                let own_weight = self.vocabulary.weight_in(i, &pasted_words);
                ranked.push((
                    i,
                    total,
                    Ranked {
                        case,
                        score,
                        names_the_error,
                        by_calls,
                        by_description: false,
                        matched: matched_spans(&tokens, &shared)
                            .into_iter()
                            .map(|m| as_written(text, &m).unwrap_or(m))
                            .chain(
                                shared
                                    .iter()
                                    .filter_map(|f| f.strip_prefix("xid:"))
                                    .map(|n| format!("Xid {n}")),
                            )
                            .chain(
                                features::FIGURE_WORDS
                                    .iter()
                                    .filter(|(f, _)| shared.contains(&f.to_string()))
                                    .map(|(_, words)| (*words).to_owned()),
                            )
                            .chain(
                                (!own_words.is_empty()).then(|| {
                                    OWN_WORDS_SAID.replace("{words}", &own_words.join(", "))
                                }),
                            )
                            .collect(),
                        own_words,
                        own_weight,
                    },
                ));
            }
        }
        // Prose that matched no case on an error's words: the words of the
        // cases' descriptions decide, before the calls alone.
        // A compiler's refusal is a build that never ran: no case's
        // description explains it.
        if ranked.iter().all(|(_, _, r)| r.by_calls) && !features::reports_a_build_failure(text) {
            let written = description::words_as_written(text);
            let stems: Vec<String> = written.iter().map(|(_, s)| s.clone()).collect();
            for (i, case) in self.index.cases.iter().enumerate() {
                // A text that makes the call whose absence is the case's
                // failure tells another failure, as with the calls alone.
                let makes_the_missing_call = self.missing_calls[i]
                    .iter()
                    .any(|f| query_calls.contains(f) && !query_missing.contains(f));
                let (found, weight) = self.description.shared(i, &stems);
                // A known failure, reproduced nowhere, is found by its
                // error's words only: words of a description never make a
                // known failure's answer.
                if !case.reproduced
                    || makes_the_missing_call
                    || !Description::matches(&found, weight)
                {
                    continue;
                }
                let matched: Vec<String> = found
                    .iter()
                    .filter_map(|s| written.iter().find(|(_, o)| o == *s))
                    .map(|(w, _)| w.clone())
                    .chain([description::DESCRIPTION_SAID.to_owned()])
                    .collect();
                ranked.retain(|(j, _, _)| *j != i);
                ranked.push((
                    i,
                    0.0,
                    Ranked {
                        case,
                        score: weight,
                        names_the_error: false,
                        by_calls: false,
                        by_description: true,
                        matched,
                        own_words: Vec::new(),
                        own_weight: 0.0,
                    },
                ));
            }
        }
        ranked.sort_by(|(ia, ta, a), (ib, tb, b)| {
            b.names_the_error
                .cmp(&a.names_the_error)
                .then(a.by_calls.cmp(&b.by_calls))
                .then(a.by_description.cmp(&b.by_description))
                .then(score_key(b.score).cmp(&score_key(a.score)))
                .then(b.case.reproduced.cmp(&a.case.reproduced))
                .then(b.own_weight.total_cmp(&a.own_weight))
                .then(tb.total_cmp(ta))
                .then(ia.cmp(ib))
        });
        ranked.into_iter().map(|(_, _, r)| r).collect()
    }
}

/// A score as the ranking compares it: to a millionth, so that the same
/// features summed in another order (a figure counted with a case's best
/// text, or added after it) score the same and tie, as the answer shows
/// them. The page rounds the same way.
pub fn score_key(score: f64) -> i64 {
    (score * 1e6).round() as i64
}

/// The words of the text covered by shared features, as maximal phrases,
/// and the shared identifiers, each once, in the order the text has them.
fn matched_spans(tokens: &[Token], shared: &BTreeSet<&String>) -> Vec<String> {
    let mut covered = vec![false; tokens.len()];
    let mut identifier = vec![false; tokens.len()];
    for p in features::phrases(tokens, Reading::Pasted) {
        if !shared.contains(&p.feature) {
            continue;
        }
        if p.feature.starts_with("id:") {
            identifier[p.tokens[0]] = true;
        } else {
            for j in p.tokens {
                covered[j] = true;
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut phrase: Vec<&str> = Vec::new();
    let flush = |phrase: &mut Vec<&str>, out: &mut Vec<String>| {
        // A function word that ends a span ("… in forked subprocess. To")
        // only joined it to the next word.
        while phrase
            .last()
            .is_some_and(|w| features::FUNCTION_WORDS.contains(&w.to_ascii_lowercase().as_str()))
        {
            phrase.pop();
        }
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

/// Each item's weight from how many of the `n` cases hold it (`held`, one
/// set a case): `scale`·ln(1 + n/k), rarer items weighing more.
fn weight_by_holders(held: &[BTreeSet<String>], n: f64, scale: f64) -> BTreeMap<String, f64> {
    let mut holders: BTreeMap<&String, usize> = BTreeMap::new();
    for items in held {
        for item in items {
            *holders.entry(item).or_default() += 1;
        }
    }
    holders
        .into_iter()
        .map(|(item, k)| (item.clone(), scale * (1.0 + n / k as f64).ln()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::score_key;

    #[test]
    fn the_same_weights_summed_in_another_order_score_the_same() {
        let (a, b, c) = (17.718_281_828, 4.428_571_43, 3.371_428_57);
        let one = (a + b) + c;
        let other = (a + c) + b;
        // Summed in two orders, floating point may tell them apart; the
        // ranking may not.
        assert_eq!(score_key(one), score_key(other));
        assert!(score_key(one + 0.01) > score_key(one));
    }
}
