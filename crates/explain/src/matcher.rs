//! The matcher's word lists and weights as this build has them, gathered
//! from the modules that rank with them into the index's [`Matcher`], so
//! the book's page ranks with the same. It stands above `features`,
//! `rank` and `answer`, which the index itself does not import.

use crate::index::Matcher;
use crate::{answer, description, features, rank, vocabulary};

impl Matcher {
    /// The constants this build ranks with.
    pub fn of_this_build() -> Matcher {
        let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
        Matcher {
            generic_words: owned(features::GENERIC_WORDS),
            function_words: owned(features::FUNCTION_WORDS),
            generic_identifiers: owned(features::GENERIC_IDENTIFIERS),
            generic_phrases: owned(features::GENERIC_PHRASES),
            boilerplate: owned(features::BOILERPLATE),
            error_name_prefixes: owned(features::ERROR_NAME_PREFIXES),
            source_extensions: owned(features::SOURCE_EXTENSIONS),
            later_device_words: owned(features::LATER_DEVICE_WORDS),
            device_nouns: owned(features::DEVICE_NOUNS),
            not_the_first_words: owned(features::NOT_THE_FIRST_WORDS),
            library_errors: owned(features::LIBRARY_ERRORS),
            code_starts: owned(features::CODE_STARTS),
            out_of_memory_abbreviations: owned(features::OUT_OF_MEMORY_ABBREVIATIONS),
            out_of_memory_denials: owned(features::OUT_OF_MEMORY_DENIALS),
            memory_words: owned(features::MEMORY_WORDS),
            memory_qualifiers: owned(features::MEMORY_QUALIFIERS),
            running_out_words: owned(features::RUNNING_OUT_WORDS),
            first_device_words: owned(features::FIRST_DEVICE_WORDS),
            other_devices_words: owned(features::OTHER_DEVICES_WORDS),
            memory_amount_words: owned(features::MEMORY_AMOUNT_WORDS),
            released_words: owned(features::RELEASED_WORDS),
            negations: owned(features::NEGATIONS),
            out_of_bounds_report: features::OUT_OF_BOUNDS_REPORT.to_owned(),
            figure_words: features::FIGURE_WORDS
                .iter()
                .map(|(f, w)| ((*f).to_owned(), (*w).to_owned()))
                .collect(),
            units: features::UNITS
                .iter()
                .map(|(u, f)| ((*u).to_owned(), *f))
                .collect(),
            asynchronous: owned(answer::ASYNCHRONOUS),
            asynchronous_hint: answer::ASYNCHRONOUS_HINT.to_owned(),
            tied_note: answer::TIED_NOTE.to_owned(),
            unnamed_note: answer::UNNAMED_NOTE.to_owned(),
            out_of_bounds_note: answer::OUT_OF_BOUNDS_NOTE.to_owned(),
            own_words_said: rank::OWN_WORDS_SAID.to_owned(),
            own_word_cases: vocabulary::OWN_WORD_CASES,
            min_score: rank::MIN_SCORE,
            first_error_weight: rank::FIRST_ERROR_WEIGHT,
            other_error_weight: rank::OTHER_ERROR_WEIGHT,
            api_name_prefixes: owned(features::API_NAME_PREFIXES),
            api_name_weight: rank::API_NAME_WEIGHT,
            missing_call_words: owned(features::MISSING_CALL_WORDS),
            missing_call_window: features::MISSING_CALL_WINDOW,
            clause_marks: features::CLAUSE_MARKS.to_owned(),
            everyday_words: owned(description::EVERYDAY_WORDS),
            stem_endings: owned(description::STEM_ENDINGS),
            description_word_cases: description::DESCRIPTION_WORD_CASES,
            description_min_words: description::DESCRIPTION_MIN_WORDS,
            description_min_score: description::DESCRIPTION_MIN_SCORE,
            description_said: description::DESCRIPTION_SAID.to_owned(),
            description_note: description::DESCRIPTION_NOTE.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::index::{Index, Matcher};

    /// The book's page ranks with the index's word lists and weights: they
    /// must be this build's (`cargo xtask docs` writes them).
    #[test]
    fn the_index_carries_this_builds_matcher() {
        assert_eq!(
            Index::embedded().unwrap().matcher,
            Some(Matcher::of_this_build())
        );
    }
}
