//! The held-out measure, on the committed index: texts pasted in public
//! threads that no case cites, each labelled with its case or `none`.

use std::collections::BTreeSet;

use casebook_explain::Index;
use casebook_explain::heldout::{self, NONE};

fn held() -> heldout::HeldOut {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(heldout::TEXTS_TOML);
    heldout::parse(&std::fs::read_to_string(path).expect("the held-out texts"))
        .expect("the held-out texts parse")
}

#[test]
fn no_case_cites_a_held_out_thread() {
    let index = Index::embedded().unwrap();
    let cited: BTreeSet<&str> = index
        .cases
        .iter()
        .flat_map(|c| {
            c.reports
                .iter()
                .map(String::as_str)
                .chain(c.texts.iter().map(|t| t.from.as_str()))
        })
        .collect();
    let held = held();
    let shared: Vec<&str> = held
        .paste
        .iter()
        .map(|p| p.report.as_str())
        .filter(|r| cited.contains(r))
        .collect();
    assert!(
        shared.is_empty(),
        "held-out threads that cases cite: {shared:?}"
    );
    let distinct: BTreeSet<&str> = held.paste.iter().map(|p| p.report.as_str()).collect();
    assert_eq!(distinct.len(), held.paste.len(), "a thread appears twice");
}

#[test]
fn every_label_is_a_case_or_none() {
    let index = Index::embedded().unwrap();
    for p in &held().paste {
        assert!(
            p.expect == NONE
                || index
                    .cases
                    .iter()
                    .any(|c| c.reproduced && c.scenario == p.expect),
            "{}: `{}` is no reproduced case",
            p.report,
            p.expect
        );
    }
}

#[test]
fn the_set_is_large_enough_to_measure() {
    let held = held();
    assert!(held.paste.len() >= 40, "{} texts", held.paste.len());
    let near = held
        .paste
        .iter()
        .filter(|p| p.near_miss && p.expect == NONE)
        .count();
    assert!(near >= 10, "{near} near misses");
}

/// What the ranking reaches on the held-out texts, as the README and the
/// book state it: a floor, so that a change that finds fewer cases fails.
/// The goal is higher (every covered text's case among the first three,
/// first for nine in ten); the misses are listed by
/// `cargo run -p casebook-explain --example heldout`.
#[test]
fn the_ranking_keeps_what_it_reaches_on_the_held_out_texts() {
    let score = heldout::evaluate(&Index::embedded().unwrap(), &held());
    println!("{}", score.summary());
    for m in &score.misses {
        println!("  miss: {m}");
    }
    assert!(score.first >= 27, "{}", score.summary());
    assert!(score.first + score.tied_first >= 35, "{}", score.summary());
    // 32 since phrases built of function words stopped deciding answers:
    // NVIDIA/numba-cuda-mlir#194 was first only through thrust's frame
    // "failed to synchronize", and is now in the tie of every case that
    // reproduces "an illegal memory access was encountered".
    assert!(score.top3 >= 32, "{}", score.summary());
    // Counted as misses, so that a text relabelled from none to a case once
    // that case has run (PatchmatchNet#35) moves no floor.
    assert!(score.uncovered - score.no_match <= 2, "{}", score.summary());
}
