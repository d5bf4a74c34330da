//! The index `explain` reads: every case with the texts its GPU run
//! returned and the texts users paste for it. `cargo xtask docs` writes it
//! (`docs/src/explain/index.json`) from the catalogue, the committed report
//! and each case's `pasted.toml`; this crate only reads it.

use serde::{Deserialize, Serialize};

/// Where the generated index lives, relative to the repository root.
pub const INDEX_JSON: &str = "docs/src/explain/index.json";

/// The index this binary was built with.
pub const EMBEDDED: &str = include_str!("../../../docs/src/explain/index.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// Bumped when the format changes.
    pub schema: u32,
    /// The GPU run the run texts come from.
    pub run: Option<RunInfo>,
    /// The matcher's word lists and weights, from this crate's constants
    /// ([`Matcher::of_this_build`]): the book's page reads them here, so
    /// the two rankings share one home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<Matcher>,
    pub cases: Vec<Case>,
}

/// What `features`, `rank` and `answer` match with, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matcher {
    pub generic_words: Vec<String>,
    pub function_words: Vec<String>,
    pub generic_identifiers: Vec<String>,
    pub generic_phrases: Vec<String>,
    pub boilerplate: Vec<String>,
    pub error_name_prefixes: Vec<String>,
    pub source_extensions: Vec<String>,
    /// How a text says the device is not the first without its number.
    #[serde(default)]
    pub later_device_words: Vec<String>,
    /// How a line of the user's code starts
    /// ([`features::is_code`](crate::features::is_code)).
    #[serde(default)]
    pub code_starts: Vec<String>,
    /// A library's error printed without a colon after it.
    #[serde(default)]
    pub library_errors: Vec<String>,
    /// The nouns that name a device before its number, and how a text says
    /// its number is not the first's ("a GPU != 0").
    #[serde(default)]
    pub device_nouns: Vec<String>,
    #[serde(default)]
    pub not_the_first_words: Vec<String>,
    /// How a text says "out of memory" in other words
    /// ([`features::out_of_memory_in_words`](crate::features::out_of_memory_in_words)).
    #[serde(default)]
    pub out_of_memory_abbreviations: Vec<String>,
    /// What denies an out-of-memory right before it ("not OOM").
    #[serde(default)]
    pub out_of_memory_denials: Vec<String>,
    #[serde(default)]
    pub memory_words: Vec<String>,
    #[serde(default)]
    pub memory_qualifiers: Vec<String>,
    #[serde(default)]
    pub running_out_words: Vec<String>,
    /// How a line says the first GPU holds memory beside the others
    /// ([`features::first_gpu_holds_memory_for_others`](crate::features::first_gpu_holds_memory_for_others)).
    #[serde(default)]
    pub first_device_words: Vec<String>,
    #[serde(default)]
    pub other_devices_words: Vec<String>,
    #[serde(default)]
    pub memory_amount_words: Vec<String>,
    /// How a clause says the first GPU gave its memory back, and the words
    /// that deny it.
    #[serde(default)]
    pub released_words: Vec<String>,
    #[serde(default)]
    pub negations: Vec<String>,
    /// What compute-sanitizer writes where an access fell outside every
    /// allocation.
    #[serde(default)]
    pub out_of_bounds_report: String,
    /// What each figure feature says, shown among what matched.
    pub figure_words: Vec<(String, String)>,
    pub units: Vec<(String, f64)>,
    pub asynchronous: Vec<String>,
    pub asynchronous_hint: String,
    /// Said where the first matches tie; `{n}`: how many.
    pub tied_note: String,
    /// Said where the text names an error the first match's texts do not;
    /// `{names}`: those names.
    pub unnamed_note: String,
    /// Said where the text is compute-sanitizer's report of an
    /// out-of-bounds access alone.
    #[serde(default)]
    pub out_of_bounds_note: String,
    /// How what matched shows a case's own words; `{words}`: those words.
    #[serde(default)]
    pub own_words_said: String,
    /// The most cases that may have a word for it to be their own.
    #[serde(default)]
    pub own_word_cases: usize,
    pub min_score: f64,
    pub first_error_weight: f64,
    pub other_error_weight: f64,
    /// How a CUDA call's name starts
    /// ([`features::is_api_name`](crate::features::is_api_name)), and what
    /// one the text and a case name counts for.
    #[serde(default)]
    pub api_name_prefixes: Vec<String>,
    #[serde(default)]
    pub api_name_weight: f64,
    /// How a text says a call is not made, and within how many words
    /// before its name.
    #[serde(default)]
    pub missing_call_words: Vec<String>,
    #[serde(default)]
    pub missing_call_window: usize,
    #[serde(default)]
    pub clause_marks: String,
    /// What prose that shares no error text with any case is matched on
    /// ([`crate::description`]): the everyday words that never count, the
    /// endings a word's stem loses, the most cases that may use a word for
    /// it to count, how many such words and what weight make a match, and
    /// what the answer says of it.
    #[serde(default)]
    pub everyday_words: Vec<String>,
    #[serde(default)]
    pub stem_endings: Vec<String>,
    #[serde(default)]
    pub description_word_cases: usize,
    #[serde(default)]
    pub description_min_words: usize,
    #[serde(default)]
    pub description_min_score: f64,
    #[serde(default)]
    pub description_said: String,
    #[serde(default)]
    pub description_note: String,
}

/// The committed GPU run: what reproduced the cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub gpu: String,
    pub driver: String,
    pub cuda: String,
    pub pytorch: Option<String>,
    pub commit: String,
    pub date: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// The case's slug: a scenario's folder, or a known failure's file.
    pub scenario: String,
    /// Whether a variant of the catalogue provokes it on a GPU.
    pub reproduced: bool,
    pub title: String,
    pub cause: String,
    pub fix: String,
    /// The cookbook page, relative to the repository root.
    pub page: Option<String>,
    /// The same page in the built book, relative to its root.
    pub book_page: Option<String>,
    /// The commands that run the case: with Rust, and from the bundle.
    pub run: Option<RunCommands>,
    /// Whether the case has PyTorch variants (the run's PyTorch applies).
    #[serde(default)]
    pub pytorch: bool,
    /// The run that reproduced it, where the committed report holds its
    /// trials (a case added since has none until a full run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduced_on: Option<RunInfo>,
    /// Public reports (`owner/repo#N`) of this failure.
    #[serde(default)]
    pub reports: Vec<String>,
    /// For a case not reproduced here: why not, and what a user can check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not_here: Option<String>,
    pub texts: Vec<Text>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCommands {
    pub cargo: String,
    pub bundle: String,
}

/// One text that belongs to a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Text {
    pub text: String,
    /// `run` for a text a variant returned on the GPU, else the public
    /// report (`owner/repo#N`) a user pasted it in.
    pub from: String,
    /// The variant that returned it, for a run text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The versions the text comes from, as its thread or the run states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<String>,
}

impl Index {
    pub const SCHEMA: u32 = 1;

    pub fn parse(json: &str) -> anyhow::Result<Index> {
        let index: Index = serde_json::from_str(json)?;
        anyhow::ensure!(
            index.schema == Self::SCHEMA,
            "the index has schema {}, this explain reads {}",
            index.schema,
            Self::SCHEMA
        );
        Ok(index)
    }

    pub fn embedded() -> anyhow::Result<Index> {
        Self::parse(EMBEDDED)
    }
}
