//! Prose told in the user's own words, matched on the words of a case's
//! description: its name, title, cause and fix, and the texts its users
//! pasted and its run returned.
//!
//! A text that tells a failure without its error ("the device heap is only
//! 8 MB, not enough", "the index wraps negative past 2^31 - 1") shares no
//! error name and no message fragment with the case that reproduces it, so
//! [`crate::rank`] finds nothing. Where that is so, the words it shares with
//! each case's description decide, each weighing `ln(1 + cases / cases
//! using it)`. Only distinctive words count: a word that more than
//! [`DESCRIPTION_WORD_CASES`] cases use anywhere (in any text, or their
//! own description) says nothing of which failure this is ("memory",
//! "python", "even"). A case matches only on [`DESCRIPTION_MIN_WORDS`]
//! such words or more, weighing [`DESCRIPTION_MIN_SCORE`] together: one
//! rare word ("heap" alone) is no description. Such a match comes after
//! every match on an error's words, and says it matched on words of a
//! description, not on an error text ([`DESCRIPTION_SAID`]). The book's page
//! computes the same (`docs/src/explain/explain.js`).

use std::collections::{BTreeMap, BTreeSet};

use crate::features::{self, Token};
use crate::index::{Case, Index};
use crate::vocabulary;

/// Everyday English that names no failure: a standard list of stop words
/// (the Glasgow information-retrieval group's, less the
/// [`FUNCTION_WORDS`](crate::features::FUNCTION_WORDS) and generic words
/// already dropped), and the names of what every report runs on. Few cases
/// of a small index may use such a word, and it would still tell none of
/// them apart.
pub const EVERYDAY_WORDS: &[&str] = &[
    "about",
    "above",
    "across",
    "after",
    "afterwards",
    "again",
    "against",
    "all",
    "almost",
    "alone",
    "along",
    "already",
    "also",
    "although",
    "always",
    "among",
    "amongst",
    "amount",
    "another",
    "any",
    "anyhow",
    "anyone",
    "anything",
    "anyway",
    "anywhere",
    "around",
    "back",
    "became",
    "because",
    "become",
    "becomes",
    "becoming",
    "before",
    "beforehand",
    "behind",
    "below",
    "beside",
    "besides",
    "between",
    "beyond",
    "both",
    "bottom",
    "could",
    "couldnt",
    "describe",
    "detail",
    "done",
    "down",
    "due",
    "during",
    "each",
    "either",
    "eight",
    "eleven",
    "else",
    "elsewhere",
    "enough",
    "etc",
    "even",
    "ever",
    "every",
    "everyone",
    "everything",
    "everywhere",
    "except",
    "few",
    "fifteen",
    "fifty",
    "fill",
    "find",
    "first",
    "five",
    "former",
    "formerly",
    "forty",
    "found",
    "four",
    "front",
    "full",
    "further",
    "get",
    "give",
    "hence",
    "here",
    "hereafter",
    "hereby",
    "herein",
    "hereupon",
    "hers",
    "herself",
    "him",
    "himself",
    "how",
    "however",
    "hundred",
    "indeed",
    "interest",
    "itself",
    "keep",
    "last",
    "latter",
    "latterly",
    "least",
    "less",
    "made",
    "many",
    "meanwhile",
    "mine",
    "more",
    "moreover",
    "most",
    "mostly",
    "move",
    "much",
    "myself",
    "name",
    "namely",
    "neither",
    "never",
    "nevertheless",
    "next",
    "nine",
    "nobody",
    "none",
    "noone",
    "nothing",
    "now",
    "nowhere",
    "off",
    "often",
    "once",
    "one",
    "only",
    "onto",
    "other",
    "others",
    "otherwise",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "part",
    "per",
    "perhaps",
    "put",
    "rather",
    "same",
    "see",
    "seem",
    "seemed",
    "seeming",
    "seems",
    "serious",
    "several",
    "show",
    "side",
    "since",
    "six",
    "sixty",
    "some",
    "somehow",
    "someone",
    "something",
    "sometime",
    "sometimes",
    "somewhere",
    "still",
    "such",
    "take",
    "ten",
    "themselves",
    "thence",
    "thereafter",
    "thereby",
    "therefore",
    "therein",
    "thereupon",
    "third",
    "though",
    "three",
    "through",
    "throughout",
    "thru",
    "thus",
    "together",
    "too",
    "top",
    "toward",
    "towards",
    "twelve",
    "twenty",
    "two",
    "under",
    "until",
    "upon",
    "very",
    "via",
    "well",
    "whatever",
    "whence",
    "whenever",
    "whereafter",
    "whereas",
    "whereby",
    "wherein",
    "whereupon",
    "wherever",
    "whether",
    "while",
    "whither",
    "whoever",
    "whole",
    "whom",
    "whose",
    "why",
    "within",
    "without",
    "yet",
    "yours",
    "yourself",
    "yourselves",
    // The languages, frameworks and systems a report runs on: every
    // user's program has some, whatever failed in it.
    "python",
    "pytorch",
    "tensorflow",
    "keras",
    "jax",
    "numpy",
    "cupy",
    "numba",
    "julia",
    "linux",
    "ubuntu",
    "windows",
    "conda",
    "pip",
];

/// The most cases that may use a word for it to tell theirs from the
/// others: a word used by more says nothing of which failure it is.
pub const DESCRIPTION_WORD_CASES: usize = 5;

/// How many distinctive words a text must share with a case's description
/// for a match: several, never one.
pub const DESCRIPTION_MIN_WORDS: usize = 3;

/// What the shared distinctive words must weigh together: more than three
/// words that two or three cases each use. Three such words (about 9.2
/// together: "group", "rank", "timeout") named a case for logs whose cause
/// no case holds; no answer of the development sets weighed between 9.0
/// and 9.5.
pub const DESCRIPTION_MIN_SCORE: f64 = 9.5;

/// Shown after the words of a description the text holds, among what
/// matched.
pub const DESCRIPTION_SAID: &str = "(matched on words of its description, not an error text)";

/// Said where the first match matched on words of its description: the
/// text names no error or message a case holds.
pub const DESCRIPTION_NOTE: &str = "Your text holds no error name or message of any case: the \
     cases below match words of their descriptions (their titles, causes and fixes, and what \
     users wrote of them), not an error text. Read each cause against what your program does; \
     the error itself, if there is one, would tell more.";

/// The endings [`stem`] takes off, the longest first.
pub const STEM_ENDINGS: &[&str] = &[
    "isation", "ization", "ations", "ation", "ising", "izing", "ating", "ated", "ates", "ised",
    "ized", "ises", "izes", "ions", "ion", "ive", "ing", "ate", "ise", "ize", "ed", "ly", "e",
];

/// A word without the endings that make a verb, a noun or an adjective of
/// one stem, so that "synchronised", "synchronizing" and "synchronization",
/// or "recursion" and "recursive", are one word: each ending in turn (of
/// [`STEM_ENDINGS`], the first that fits), while four letters or more
/// remain.
pub fn stem(word: &str) -> String {
    let mut w = word.to_owned();
    loop {
        let Some(e) = STEM_ENDINGS
            .iter()
            .find(|e| w.len() >= e.len() + 4 && w.ends_with(*e))
        else {
            return w;
        };
        w.truncate(w.len() - e.len());
    }
}

/// The words of a text as a description is matched on: its
/// [`vocabulary::words`] less [`EVERYDAY_WORDS`], each [`stem`]med, each
/// once, in the order the text has them.
pub fn words(text: &str) -> Vec<String> {
    words_as_written(text).into_iter().map(|(_, s)| s).collect()
}

/// [`words`] with each word as the text writes it (its first word of
/// each stem): what an answer shows.
pub fn words_as_written(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in features::tokens(text) {
        let Token::Word(written) = t else { continue };
        let Some(w) = vocabulary::word(&written) else {
            continue;
        };
        let everyday = |w: &str| EVERYDAY_WORDS.contains(&w);
        if everyday(&w) || everyday(&written.to_ascii_lowercase()) {
            continue;
        }
        let s = stem(&w);
        if !out.iter().any(|(_, o)| *o == s) {
            out.push((written, s));
        }
    }
    out
}

/// Every word a case uses anywhere: in its name, title, cause, fix and
/// texts ([`vocabulary::words`]), each once: what tells whether a word is
/// common.
pub fn used_words(case: &Case) -> BTreeSet<String> {
    let name = case.scenario.replace('-', " ");
    [&name, &case.title, &case.cause, &case.fix]
        .into_iter()
        .chain(case.texts.iter().map(|t| &t.text))
        .flat_map(|t| words(t))
        .collect()
}

/// The words of a case's description: those of its name, title, cause and
/// fix, and those two or more of the sources of its texts use (two threads,
/// or a thread and the run): a word one user wrote may be that user's.
pub fn described_words(case: &Case) -> BTreeSet<String> {
    let name = case.scenario.replace('-', " ");
    vocabulary::case_words(case, &[&name, &case.title, &case.cause, &case.fix], words)
}

/// Every case's distinctive words, with their weights.
#[derive(Debug, Clone)]
pub struct Description {
    distinctive: Vec<BTreeMap<String, f64>>,
}

impl Description {
    pub fn new(index: &Index) -> Self {
        let described: Vec<BTreeSet<String>> = index.cases.iter().map(described_words).collect();
        let used: Vec<BTreeSet<String>> = index.cases.iter().map(used_words).collect();
        let distinctive = vocabulary::rare_words(&described, &used, DESCRIPTION_WORD_CASES);
        Description { distinctive }
    }

    /// The case's distinctive words among `words` (a text's, as
    /// [`vocabulary::words`] reads them), in their order, and their weight
    /// (summed in byte order of the words, as the page sums): a match
    /// where there are [`DESCRIPTION_MIN_WORDS`] of them or more and they
    /// weigh [`DESCRIPTION_MIN_SCORE`].
    pub fn shared<'w>(&self, case: usize, words: &'w [String]) -> (Vec<&'w String>, f64) {
        let found: Vec<&String> = words
            .iter()
            .filter(|w| self.distinctive[case].contains_key(*w))
            .collect();
        let mut sorted = found.clone();
        sorted.sort();
        let weight = sorted.iter().map(|w| self.distinctive[case][*w]).sum();
        (found, weight)
    }

    /// Whether shared words make a match.
    pub fn matches(found: &[&String], weight: f64) -> bool {
        found.len() >= DESCRIPTION_MIN_WORDS && weight >= DESCRIPTION_MIN_SCORE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::explain;

    #[test]
    fn a_word_s_endings_are_set_aside_while_four_letters_remain() {
        assert_eq!(stem("synchronised"), stem("synchronizing"));
        assert_eq!(stem("synchronization"), stem("synchronize"));
        assert_eq!(stem("recursion"), stem("recursive"));
        assert_eq!(stem("recursively"), stem("recursive"));
        assert_eq!(stem("hanging"), "hang");
        // Too short to lose an ending.
        assert_eq!(stem("free"), "free");
        assert_eq!(stem("used"), "used");
    }

    #[test]
    fn prose_in_the_user_s_own_words_reaches_its_case_and_says_how() {
        let index = Index::embedded().unwrap();
        // No error name, no message: the failure told in words.
        let prose = "Threads call malloc inside our kernel and past a few thousand of them it \
                     returns null; how do we raise the heap for the kernels?";
        let answer = explain(&index, prose);
        assert_eq!(answer.matches[0].scenario, "device-heap-exhaustion");
        assert!(answer.by_description);
        let matched = &answer.matches[0].matched;
        assert!(matched.contains(&"heap".to_owned()), "{matched:?}");
        assert_eq!(matched.last().map(String::as_str), Some(DESCRIPTION_SAID));
        let prose = "The sort is a recursive device function, and on deep inputs the thread's \
                     stack overflows before it returns.";
        let answer = explain(&index, prose);
        assert_eq!(answer.matches[0].scenario, "kernel-stack-overflow");
        assert!(answer.by_description);
    }

    #[test]
    fn one_rare_word_or_everyday_words_make_no_match() {
        let index = Index::embedded().unwrap();
        // One case's own word alone is no description.
        assert!(explain(&index, "the heap").matches.is_empty());
        // Everyday English never counts, however few cases use it.
        let everyday = "It seems that since then the whole thing sometimes hangs, however \
                        several times it worked, perhaps because of something else.";
        assert!(explain(&index, everyday).matches.is_empty());
        for w in EVERYDAY_WORDS {
            assert!(words(w).is_empty(), "{w}");
        }
        // Words many cases use are no case's, whoever wrote them.
        let description = Description::new(&index);
        for (i, case) in index.cases.iter().enumerate() {
            for w in ["python", "memory", "process", "error", "training", "kernel"] {
                assert!(
                    !description.distinctive[i].contains_key(&stem(w)),
                    "{w} is {}'s",
                    case.scenario
                );
            }
        }
    }

    #[test]
    fn a_text_an_error_s_words_match_is_not_read_as_a_description() {
        let index = Index::embedded().unwrap();
        let text = "RuntimeError: CUDA error: an illegal memory access was encountered\n\
                    Our kernel calls malloc and the heap returns null pointers.";
        let answer = explain(&index, text);
        assert!(!answer.by_description);
        assert!(
            answer
                .matches
                .iter()
                .all(|m| !m.matched.contains(&DESCRIPTION_SAID.to_owned()))
        );
    }
}
