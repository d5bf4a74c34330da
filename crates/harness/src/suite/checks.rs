//! The checks of the catalogue itself, which need no GPU: its declarations,
//! its committed snapshots and evidence, and the fairness of its claims'
//! judges.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use casebook_model::{Outcome, Scenario, TrialId};
use casebook_report::run::EVIDENCE_JSON;
use casebook_report::{Report, Verdict};
use libtest_mimic::{Completion, Failed, Trial};

use crate::reporter::snapshot;
use crate::workspace;

/// Checks of the catalogue itself, which need no GPU.
///
/// The two that need every variant's snapshot and committed evidence hold
/// every variant to them but a pair trial that has neither yet: that one
/// awaits its two-GPU run ([`awaiting_pair_run`]), and the check says so by
/// name and count, as an ignored trial with the reason (the rest checked),
/// rather than failing or passing in silence.
pub fn catalog_checks(catalog: &Arc<Vec<Scenario>>, root: &Path) -> Vec<Trial> {
    /// A check of the catalogue, given the repository's root: the trials it
    /// could not hold to it because they await their two-GPU run.
    type Check = fn(&[Scenario], &Path) -> Result<Vec<TrialId>, String>;
    let checks: [(&str, Check); 7] = [
        ("declarations-are-consistent", |c, _| {
            check_declarations(c).map(|()| Vec::new())
        }),
        ("every-variant-has-a-passing-snapshot", check_snapshots),
        ("evidence-covers-every-variant", check_evidence),
        ("every-judge-can-go-either-way", |c, r| {
            check_fairness(c, r).map(|()| Vec::new())
        }),
        ("python-variants-use-declared-names", |c, r| {
            crate::pytorch::check_python_variants(c, r).map(|()| Vec::new())
        }),
        ("every-verdict-has-a-control", |c, r| {
            check_controls(c, r).map(|()| Vec::new())
        }),
        ("one-verdict-per-sentence", |c, r| {
            check_one_verdict_per_sentence(c, r).map(|()| Vec::new())
        }),
    ];
    checks
        .into_iter()
        .map(|(name, check)| {
            let (c, r) = (Arc::clone(catalog), root.to_path_buf());
            Trial::ignorable_test(format!("catalog::{name}"), move || {
                let awaiting = check(&c, &r).map_err(Failed::from)?;
                Ok(if awaiting.is_empty() {
                    Completion::Completed
                } else {
                    Completion::ignored_with(awaiting_words(&awaiting))
                })
            })
        })
        .collect()
}

/// What a check says of the pair trials that await their two-GPU run: how
/// many, and which. `cargo xtask test` reads the count back from the words
/// before the colon.
pub fn awaiting_words(awaiting: &[TrialId]) -> String {
    let names: Vec<String> = awaiting.iter().map(|t| t.to_string()).collect();
    format!(
        "{} {AWAITING}, every other variant checked: {}",
        names.len(),
        names.join(", ")
    )
}

/// The words that name the state of a pair trial with no snapshot and no
/// committed evidence yet.
pub const AWAITING: &str = "pair trial(s) await their two-GPU run (no snapshot, no evidence yet)";

/// The trials of scenarios that need a pair of GPUs that have neither a
/// committed snapshot nor a result in the committed evidence (`report`):
/// no machine with two GPUs has run them yet. Such a trial is a listed,
/// counted state of the catalogue, not a pass; one that has either but not
/// both is an error of the checks that read them.
pub fn awaiting_pair_run(
    catalog: &[Scenario],
    root: &Path,
    report: Option<&Report>,
) -> Vec<TrialId> {
    catalog
        .iter()
        .filter(|s| s.needs_pair())
        .flat_map(|s| s.variants.iter().map(move |v| (s, v)))
        .filter(|(s, v)| {
            let snapshot = snapshot::path(root, s.slug, v.name).is_file();
            let evidence = report.is_some_and(|r| {
                r.results
                    .iter()
                    .any(|e| e.scenario == s.slug && e.variant == v.name)
            });
            !snapshot && !evidence
        })
        .map(|(s, v)| s.trial_id(v))
        .collect()
}

/// How many decided claims may still wait for their control: none, since
/// every decided claim has its control or the reason it has none. The
/// number may only go down.
pub const CONTROLS_PENDING: usize = 0;

/// Every decided claim's control, judged by the claim's own judge on its
/// recorded outcome, gives the other answer: the experiment could have
/// come out otherwise. A control names another variant of the same
/// scenario; a claim with none says why, or counts against
/// [`CONTROLS_PENDING`].
pub fn check_controls(catalog: &[Scenario], root: &Path) -> Result<(), String> {
    if catalog.iter().all(|s| s.claims.is_empty()) {
        return Ok(());
    }
    let problems = control_problems(catalog, &read_evidence(root)?, CONTROLS_PENDING);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// What [`check_controls`] finds wrong in `report`, with at most
/// `allowed_pending` decided claims still waiting for a control.
fn control_problems(catalog: &[Scenario], report: &Report, allowed_pending: usize) -> Vec<String> {
    let mut problems = Vec::new();
    let mut pending = Vec::new();
    for s in catalog {
        let entry = |variant: &str| {
            report
                .results
                .iter()
                .find(|r| r.scenario == s.slug && r.variant == variant)
        };
        for c in s.claims {
            let decided = entry(c.judged_by)
                .and_then(|r| r.claims.iter().find(|x| x.id == c.id))
                .map(|x| x.verdict);
            let controls: Vec<(Option<&str>, casebook_model::Control)> = match c.control {
                casebook_model::Control::Parts(parts) => {
                    if decided.is_some_and(|d| {
                        !matches!(
                            d,
                            casebook_model::ClaimVerdict::Partly
                                | casebook_model::ClaimVerdict::Confirmed
                        )
                    }) {
                        problems.push(format!(
                            "{}: a control for each part, but its verdict is {:?}, neither partly \
                             nor confirmed",
                            c.id,
                            decided.unwrap_or(casebook_model::ClaimVerdict::Undecided)
                        ));
                    }
                    if parts.len() < 2 {
                        problems.push(format!("{}: parts, but fewer than two", c.id));
                    }
                    parts.iter().map(|p| (Some(p.part), p.control)).collect()
                }
                control => vec![(None, control)],
            };
            let mut waits = false;
            for (part, control) in controls {
                let who = match part {
                    Some(part) => format!("{} (part: {part})", c.id),
                    None => c.id.to_owned(),
                };
                match control {
                    casebook_model::Control::Run(v) => {
                        if v == c.judged_by || !s.variants.iter().any(|x| x.name == v) {
                            problems.push(format!(
                                "{who}: its control `{v}` is no other variant of {}",
                                s.slug
                            ));
                            continue;
                        }
                        let Some(decided) = decided else { continue };
                        let Some(control) = entry(v) else {
                            problems.push(format!(
                                "{who}: its control {} is not in the run",
                                TrialId::new(s.slug, v)
                            ));
                            continue;
                        };
                        let other = c.verdict(&control.outcome);
                        if other == decided || other == casebook_model::ClaimVerdict::Undecided {
                            problems.push(format!(
                                "{who}: decided {decided:?} by {}, and its control {v} reads \
                                 {other:?}: the experiment shows no other answer",
                                c.judged_by
                            ));
                        }
                    }
                    casebook_model::Control::Impossible(why) => {
                        if why.trim().is_empty() {
                            problems.push(format!("{who}: no control, and no reason"));
                        }
                    }
                    casebook_model::Control::Parts(_) => {
                        problems.push(format!("{who}: a part's control is a run or a reason"));
                    }
                    casebook_model::Control::Pending => waits = true,
                }
            }
            if waits && decided.is_some_and(|d| d != casebook_model::ClaimVerdict::Undecided) {
                pending.push(c.id);
            }
        }
    }
    if pending.len() > allowed_pending {
        problems.push(format!(
            "{} decided claims wait for a control, more than the {allowed_pending} allowed: {}",
            pending.len(),
            pending.join(", ")
        ));
    }
    problems
}

/// A decided claim: its id, where its sentence is from, its quote (spaces
/// normalised) and its verdict.
type DecidedQuote = (
    &'static str,
    casebook_model::Source,
    String,
    casebook_model::ClaimVerdict,
);

/// The pairs of claims of one source whose quotes overlap (one holds the
/// other) and whose verdicts differ.
fn same_words_apart(decided: &[DecidedQuote]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, a) in decided.iter().enumerate() {
        for b in &decided[i + 1..] {
            let same_source = a.1 == b.1;
            let overlap = a.2.contains(&b.2) || b.2.contains(&a.2);
            if same_source && overlap && a.3 != b.3 {
                problems.push(format!(
                    "{} ({:?}) and {} ({:?}) quote the same words",
                    a.0, a.3, b.0, b.3
                ));
            }
        }
    }
    problems
}

/// Two claims that quote the same sentence, or one quoting a part of the
/// other's, may not come out differently: a sentence gets one verdict,
/// unless each claim quotes its own part of it.
pub fn check_one_verdict_per_sentence(catalog: &[Scenario], root: &Path) -> Result<(), String> {
    if catalog.iter().all(|s| s.claims.is_empty()) {
        return Ok(());
    }
    let report = read_evidence(root)?;
    let normal = |q: &str| q.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut decided = Vec::new();
    for s in catalog {
        for c in s.claims {
            let verdict = report
                .results
                .iter()
                .find(|r| r.scenario == s.slug && r.variant == c.judged_by)
                .and_then(|r| r.claims.iter().find(|x| x.id == c.id))
                .map(|x| x.verdict);
            if let Some(v) = verdict {
                decided.push((c.id, c.source, normal(c.quote), v));
            }
        }
    }
    let problems = same_words_apart(&decided);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Every claim's judge, fed its deciding variant's recorded outcome changed
/// in what it reads, reaches both sides its claim declares
/// ([`crate::fairness`]).
pub fn check_fairness(catalog: &[Scenario], root: &Path) -> Result<(), String> {
    if catalog.iter().all(|s| s.claims.is_empty()) {
        return Ok(());
    }
    let report = read_evidence(root)?;
    let problems = crate::fairness::one_sided(catalog, &report);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Slugs, variant names and claim ids are unique, every scenario pairs a
/// broken variant with a fixed one, each claim is judged by a variant
/// that exists, and no case is a skeleton not written yet.
pub fn check_declarations(catalog: &[Scenario]) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut slugs = BTreeSet::new();
    let mut claim_ids = BTreeSet::new();
    for s in catalog {
        if !slugs.insert(s.slug) {
            problems.push(format!("slug {} is declared twice", s.slug));
        }
        let mut names = BTreeSet::new();
        for v in &s.variants {
            if !names.insert(v.name) {
                problems.push(format!("{} is declared twice", s.trial_id(v)));
            }
        }
        if s.title == casebook_model::NOT_WRITTEN {
            problems.push(format!(
                "{} is not written yet: its folder is the skeleton of cargo xtask new-scenario",
                s.slug
            ));
        }
        let has = |role| s.variants.iter().any(|v| v.role == role);
        if !has(casebook_model::Role::Broken) || !has(casebook_model::Role::Fixed) {
            problems.push(format!("{} lacks a broken or a fixed variant", s.slug));
        }
        for claim in s.claims {
            if !claim_ids.insert(claim.id) {
                problems.push(format!("claim {} is declared twice", claim.id));
            }
            if s.variant(claim.judged_by).is_none() {
                problems.push(format!(
                    "claim {} is judged by {}, which {} lacks",
                    claim.id, claim.judged_by, s.slug
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Every variant has a committed snapshot, and it records a pass: no
/// variant lands without evidence from a GPU run, but a pair trial that
/// awaits its two-GPU run, which is returned by name.
pub fn check_snapshots(catalog: &[Scenario], root: &Path) -> Result<Vec<TrialId>, String> {
    let report = casebook_report::run::evidence(root)?;
    let awaiting = awaiting_pair_run(catalog, root, report.as_ref());
    let mut problems = Vec::new();
    for s in catalog {
        for v in &s.variants {
            if awaiting.contains(&s.trial_id(v)) {
                continue;
            }
            let path = snapshot::path(root, s.slug, v.name);
            match std::fs::read_to_string(&path) {
                Err(_) => problems.push(format!("{} is missing", path.display())),
                Ok(text) if !text.lines().any(|l| l == "verdict: pass") => problems.push(format!(
                    "{} does not record `verdict: pass`",
                    path.display()
                )),
                Ok(_) => {}
            }
        }
        let dir = workspace::snapshot_dir(root, s.slug);
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(variant) = name
                .strip_prefix(&format!("{}@", s.slug))
                .and_then(|n| n.strip_suffix(".snap"))
            else {
                continue;
            };
            if s.variant(variant).is_none() && variant != snapshot::MATRIX {
                problems.push(format!(
                    "{} belongs to no declared variant",
                    dir.join(&name).display()
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(awaiting)
    } else {
        Err(problems.join("\n"))
    }
}

/// The names each claim judged by `v` reads that `v`'s outcome does not
/// record: a judge waiting on a name no variant writes can only ever say
/// `Undecided`.
pub fn unrecorded_reads(
    s: &Scenario,
    v: &casebook_model::Variant,
    outcome: &Outcome,
) -> Vec<String> {
    s.claims_judged_by(v.name)
        .flat_map(|claim| {
            let (_, read) = casebook_model::audit::names_read(|| (claim.judge)(outcome));
            read.into_iter()
                .filter(|name| !outcome.records(name))
                .map(move |name| {
                    format!(
                        "claim {} reads \"{name}\", which {} did not record",
                        claim.id,
                        s.trial_id(v)
                    )
                })
        })
        .collect()
}

/// The committed evidence under `root` (the newest full run, with the
/// trials run since in their places), or one line that says what is wrong.
fn read_evidence(root: &Path) -> Result<Report, String> {
    casebook_report::run::evidence(root)?
        .ok_or_else(|| format!("{} is missing", root.join(EVIDENCE_JSON).display()))
}

/// The committed evidence (the newest full GPU run, and the trials run
/// since) names every variant, every one of them passed, judging its
/// recorded outcomes again with the code as it is now gives the same
/// verdicts and claim verdicts, and the snapshot rebuilt from each recorded
/// outcome is the committed `.snap`, to the byte. A pair trial that awaits
/// its two-GPU run is returned by name instead.
pub fn check_evidence(catalog: &[Scenario], root: &Path) -> Result<Vec<TrialId>, String> {
    if catalog.iter().all(|s| s.variants.is_empty()) {
        return Ok(Vec::new());
    }
    let report = read_evidence(root)?;
    let awaiting = awaiting_pair_run(catalog, root, Some(&report));
    let path = Path::new(EVIDENCE_JSON);
    let mut problems = Vec::new();
    for s in catalog {
        for v in &s.variants {
            if awaiting.contains(&s.trial_id(v)) {
                continue;
            }
            match report
                .results
                .iter()
                .find(|r| r.scenario == s.slug && r.variant == v.name)
            {
                None => problems.push(format!("{} is not in {}", s.trial_id(v), path.display())),
                Some(r) if r.verdict != Verdict::Pass => problems.push(format!(
                    "{} did not pass in {}",
                    s.trial_id(v),
                    path.display()
                )),
                Some(r) => {
                    let path = r.from.as_ref().map_or(path, |run| Path::new(&run.file));
                    // The verdicts the code computes now, from the outcome the
                    // GPU recorded, must be those the run computed.
                    let now = crate::judge::judge(v, &r.outcome);
                    let claims = crate::judge::claims(s, v, &r.outcome);
                    let same_claims = claims.len() == r.claims.len()
                        && claims
                            .iter()
                            .zip(&r.claims)
                            .all(|(a, b)| a.id == b.id && a.verdict == b.verdict);
                    if now.verdict != r.verdict || !same_claims {
                        problems.push(format!(
                            "{}: judged again from its recorded outcome, the verdicts differ \
                             from those in {}",
                            s.trial_id(v),
                            path.display()
                        ));
                    }
                    problems.extend(unrecorded_reads(s, v, &r.outcome));
                    let view = snapshot::SnapshotView::new(s, v, &r.outcome, &now, &claims);
                    if !snapshot::matches_committed(root, s, &view) {
                        problems.push(format!(
                            "{}: rebuilt from its outcome in {}, the snapshot differs (the \
                             evidence and the snapshots come from different runs, or the \
                             snapshot was edited)",
                            snapshot::path(root, s.slug, v.name).display(),
                            path.display()
                        ));
                    }
                }
            }
        }
    }
    // A result no variant stands for: a variant removed or renamed since the
    // run (a later run may add a variant the full run lacked, never keep one
    // the catalogue lost).
    for r in &report.results {
        let known = catalog
            .iter()
            .any(|s| s.slug == r.scenario && s.variants.iter().any(|v| v.name == r.variant));
        if !known {
            let path = r.from.as_ref().map_or(path, |run| Path::new(&run.file));
            problems.push(format!(
                "{} is in {} but no variant of the catalogue is",
                r.trial(),
                path.display()
            ));
        }
    }
    if problems.is_empty() {
        Ok(awaiting)
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use casebook_model::{
        CheckName, Claim, ClaimVerdict, Control, Event, Outcome, Program, Reach, Recorder,
        Requirement, Scenario, Source, Variant,
    };

    const WRITTEN: CheckName = CheckName("written");
    const NEVER_WRITTEN: CheckName = CheckName("never written");

    fn noop(_: &mut Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    fn scenario(claims: &'static [Claim]) -> Scenario {
        let fixed = Variant::fixed("fixed", Program::host(noop));
        Scenario {
            claims,
            ..crate::judge::cell::tests::scenario(Requirement::GPU, vec![fixed])
        }
    }

    #[test]
    fn a_judge_reading_a_name_the_variant_never_wrote_is_reported() {
        const CLAIMS: &[Claim] = &[
            Claim {
                id: "reads-what-is-there",
                source: Source::Seed(""),
                quote: "",
                judged_by: "fixed",
                control: Control::Pending,
                reach: Reach::Either,
                judge: |o| ClaimVerdict::confirmed_if(o.check(WRITTEN)),
            },
            Claim {
                id: "waits-on-nothing",
                source: Source::Seed(""),
                quote: "",
                judged_by: "fixed",
                control: Control::Pending,
                reach: Reach::Either,
                judge: |o| match o.check(WRITTEN) {
                    Some(true) => ClaimVerdict::confirmed_if(o.check(NEVER_WRITTEN)),
                    _ => ClaimVerdict::Undecided,
                },
            },
        ];
        let s = scenario(CLAIMS);
        let mut outcome = Outcome::empty();
        outcome.apply(Event::Check(casebook_model::Check {
            name: WRITTEN.0.into(),
            ok: true,
        }));
        let problems = super::unrecorded_reads(&s, &s.variants[0], &outcome);
        assert_eq!(
            problems,
            vec!["claim waits-on-nothing reads \"never written\", which s::fixed did not record"]
        );
    }

    fn claims_with(control: Control) -> &'static [Claim] {
        judged_with(control, |o| ClaimVerdict::confirmed_if(o.check(WRITTEN)))
    }

    /// The one claim of [`claims_with`], judged by `judge`.
    fn judged_with(control: Control, judge: fn(&Outcome) -> ClaimVerdict) -> &'static [Claim] {
        Box::leak(Box::new([Claim {
            id: "written-means-confirmed",
            source: Source::Seed(""),
            quote: "",
            judged_by: "broken",
            control,
            reach: Reach::Either,
            judge,
        }]))
    }

    /// A report in which `broken` wrote `WRITTEN` as given and `fixed` as
    /// given, and the claim was decided on `broken`.
    fn report_of(broken: bool, fixed: bool) -> casebook_report::Report {
        let entry = |variant: &str, written: bool, verdict: Option<ClaimVerdict>| {
            let mut outcome = Outcome::empty();
            outcome.apply(Event::Check(casebook_model::Check {
                name: WRITTEN.0.into(),
                ok: written,
            }));
            casebook_report::ResultEntry {
                claims: verdict
                    .map(|verdict| casebook_report::ClaimResult {
                        id: "written-means-confirmed".into(),
                        verdict,
                    })
                    .into_iter()
                    .collect(),
                outcome,
                ..casebook_report::run::fixture::result("s", variant)
            }
        };
        let decided = ClaimVerdict::confirmed_if(Some(broken));
        casebook_report::Report::new(
            casebook_report::Source::default(),
            casebook_report::run::fixture::environment("GPU"),
            vec![
                entry("broken", broken, Some(decided)),
                entry("fixed", fixed, None),
            ],
            1.0,
        )
    }

    fn with_broken(claims: &'static [Claim]) -> Scenario {
        let mut s = scenario(claims);
        s.variants
            .push(Variant::fixed("broken", Program::host(noop)));
        s
    }

    #[test]
    fn a_control_that_reads_the_same_answer_is_reported() {
        let s = with_broken(claims_with(Control::Run("fixed")));
        // The control gives the other answer: nothing to report.
        assert!(super::control_problems(&[s], &report_of(true, false), 0).is_empty());
        let s = with_broken(claims_with(Control::Run("fixed")));
        // The control reads the same: the experiment could not come out otherwise.
        let problems = super::control_problems(&[s], &report_of(true, true), 0);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("no other answer"));
        // A control that names the deciding run, or no variant, is no control.
        let s = with_broken(claims_with(Control::Run("broken")));
        assert_eq!(
            super::control_problems(&[s], &report_of(true, false), 0).len(),
            1
        );
    }

    #[test]
    fn one_sentence_gets_one_verdict_unless_each_claim_quotes_its_own_part() {
        let seed = Source::Seed("a.txt");
        let whole = "It stays occupied, causing cuDNN errors.".to_owned();
        let part = "It stays occupied".to_owned();
        let rest = "causing cuDNN errors.".to_owned();
        let apart = super::same_words_apart(&[
            ("a", seed, whole.clone(), ClaimVerdict::Confirmed),
            ("b", seed, whole, ClaimVerdict::Refuted),
        ]);
        assert_eq!(apart.len(), 1);
        // A part inside the whole, decided otherwise: still the same words.
        assert_eq!(
            super::same_words_apart(&[
                (
                    "a",
                    seed,
                    "It stays occupied, causing cuDNN errors.".into(),
                    ClaimVerdict::Confirmed
                ),
                ("b", seed, part.clone(), ClaimVerdict::Refuted),
            ])
            .len(),
            1
        );
        // Each its own part: two verdicts stand.
        assert!(
            super::same_words_apart(&[
                ("a", seed, part, ClaimVerdict::Confirmed),
                ("b", seed, rest, ClaimVerdict::Refuted),
            ])
            .is_empty()
        );
    }

    #[test]
    fn each_part_of_a_partly_verdict_has_its_own_control() {
        fn partly(control: Control) -> &'static [Claim] {
            judged_with(control, |o| {
                ClaimVerdict::when(
                    o.check(WRITTEN),
                    ClaimVerdict::Partly,
                    ClaimVerdict::Refuted,
                )
            })
        }
        let report = || {
            let mut r = report_of(true, false);
            r.results[0].claims[0].verdict = ClaimVerdict::Partly;
            r
        };
        const RUN_AND_REASON: &[casebook_model::Part] = &[
            casebook_model::Part {
                part: "one",
                control: Control::Run("fixed"),
            },
            casebook_model::Part {
                part: "two",
                control: Control::Impossible("why"),
            },
        ];
        let s = with_broken(partly(Control::Parts(RUN_AND_REASON)));
        assert!(super::control_problems(&[s], &report(), 0).is_empty());
        // A part whose control reads "partly" too shows nothing.
        let mut r = report();
        r.results[1].outcome = r.results[0].outcome.clone();
        let s = with_broken(partly(Control::Parts(RUN_AND_REASON)));
        assert_eq!(super::control_problems(&[s], &r, 0).len(), 1);
        // A part still waiting counts against the debt; a part with no
        // reason, or a single part, is no control.
        const WAITING: &[casebook_model::Part] = &[
            casebook_model::Part {
                part: "one",
                control: Control::Run("fixed"),
            },
            casebook_model::Part {
                part: "two",
                control: Control::Pending,
            },
        ];
        let s = with_broken(partly(Control::Parts(WAITING)));
        assert!(super::control_problems(&[s], &report(), 1).is_empty());
        let s = with_broken(partly(Control::Parts(WAITING)));
        assert_eq!(super::control_problems(&[s], &report(), 0).len(), 1);
        const ONE: &[casebook_model::Part] = &[casebook_model::Part {
            part: "one",
            control: Control::Impossible(" "),
        }];
        let s = with_broken(partly(Control::Parts(ONE)));
        assert_eq!(super::control_problems(&[s], &report(), 0).len(), 2);
        // Parts belong to a verdict of "partly", or to "confirmed" where
        // every part held; a refuted sentence has no parts to control.
        let s = with_broken(partly(Control::Parts(RUN_AND_REASON)));
        let mut confirmed = report();
        confirmed.results[0].claims[0].verdict = ClaimVerdict::Confirmed;
        assert!(super::control_problems(&[s], &confirmed, 0).is_empty());
        let s = with_broken(partly(Control::Parts(RUN_AND_REASON)));
        let mut refuted = report();
        refuted.results[0].claims[0].verdict = ClaimVerdict::Refuted;
        let problems = super::control_problems(&[s], &refuted, 0);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("neither partly nor confirmed")),
            "{problems:?}"
        );
    }

    #[test]
    fn claims_waiting_for_a_control_may_not_grow() {
        let s = with_broken(claims_with(Control::Pending));
        assert!(super::control_problems(&[s], &report_of(true, false), 1).is_empty());
        let s = with_broken(claims_with(Control::Pending));
        assert_eq!(
            super::control_problems(&[s], &report_of(true, false), 0).len(),
            1
        );
    }

    /// A pair trial with neither a snapshot nor committed evidence awaits
    /// its two-GPU run: both checks name it, and hold every other variant
    /// as before; a trial of one GPU that lacks them fails, and a pair
    /// trial with one of them but not the other is held to both.
    #[test]
    fn a_pair_trial_without_a_run_is_named_as_awaiting_it_and_nothing_else_is_excused() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let pair = Scenario {
            slug: "pair",
            ..crate::judge::cell::tests::scenario(
                Requirement::GPU_PAIR,
                vec![
                    Variant::fixed("fixed", Program::host(noop)),
                    Variant::fixed("other", Program::host(noop)),
                ],
            )
        };
        let single = scenario(&[]);
        let names = |v: &[casebook_model::TrialId]| -> Vec<String> {
            v.iter().map(|t| t.to_string()).collect()
        };
        // No evidence file, no snapshots: the pair trials await, the other fails.
        assert_eq!(
            names(&super::check_snapshots(std::slice::from_ref(&pair), r).unwrap()),
            ["pair::fixed", "pair::other"]
        );
        let err = super::check_snapshots(&[pair.clone(), single.clone()], r).unwrap_err();
        assert!(err.contains("s@fixed.snap is missing"), "{err}");
        assert!(!err.contains("pair@"), "{err}");
        // Committed evidence without the pair trials: the same for the evidence.
        let evidence = r.join(super::EVIDENCE_JSON);
        std::fs::create_dir_all(evidence.parent().unwrap()).unwrap();
        let report = casebook_report::Report::new(
            casebook_report::Source::default(),
            casebook_report::run::fixture::environment("GPU"),
            Vec::new(),
            1.0,
        );
        std::fs::write(&evidence, serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(
            names(&super::check_evidence(std::slice::from_ref(&pair), r).unwrap()),
            ["pair::fixed", "pair::other"]
        );
        let err = super::check_evidence(&[pair.clone(), single], r).unwrap_err();
        assert!(err.contains("s::fixed is not in"), "{err}");
        assert!(!err.contains("pair::"), "{err}");
        // A snapshot without its run: that trial is held to both again.
        let snap = crate::reporter::snapshot::path(r, "pair", "fixed");
        std::fs::create_dir_all(snap.parent().unwrap()).unwrap();
        std::fs::write(&snap, "---\nsource: elsewhere\n---\nverdict: pass\n").unwrap();
        assert_eq!(
            names(&super::awaiting_pair_run(
                std::slice::from_ref(&pair),
                r,
                Some(&report)
            )),
            ["pair::other"]
        );
        let err = super::check_evidence(std::slice::from_ref(&pair), r).unwrap_err();
        assert!(err.contains("pair::fixed is not in"), "{err}");
        assert!(
            super::awaiting_words(&super::awaiting_pair_run(&[pair], r, Some(&report)))
                .starts_with(&format!("1 {}", super::AWAITING))
        );
    }

    #[test]
    fn evidence_of_a_variant_the_catalogue_lost_is_reported() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let evidence = r.join(super::EVIDENCE_JSON);
        std::fs::create_dir_all(evidence.parent().unwrap()).unwrap();
        let gone = casebook_report::run::fixture::result("s", "removed");
        let report = casebook_report::Report::new(
            casebook_report::Source::default(),
            casebook_report::run::fixture::environment("GPU"),
            vec![gone],
            1.0,
        );
        std::fs::write(&evidence, serde_json::to_string(&report).unwrap()).unwrap();
        let err = super::check_evidence(&[scenario(&[])], r).unwrap_err();
        assert!(
            err.contains("s::removed is in docs/evidence/latest.json but no variant"),
            "{err}"
        );
    }

    #[test]
    fn evidence_that_differs_from_a_snapshot_leaves_nothing_to_bless() {
        let root = tempfile::tempdir().unwrap();
        let s = scenario(&[]);
        let v = &s.variants[0];
        let outcome = Outcome::empty();
        let verdict = crate::judge::judge(v, &outcome);
        let view = crate::reporter::snapshot::SnapshotView::new(&s, v, &outcome, &verdict, &[]);
        let committed = crate::reporter::snapshot::path(root.path(), s.slug, v.name);
        std::fs::create_dir_all(committed.parent().unwrap()).unwrap();
        std::fs::write(&committed, "---\nsource: elsewhere\n---\nsomething else\n").unwrap();
        assert!(!crate::reporter::snapshot::matches_committed(
            root.path(),
            &s,
            &view
        ));
        assert!(!committed.with_extension("snap.new").exists());
        // A review that was pending before stays.
        std::fs::write(committed.with_extension("snap.new"), "from a GPU run").unwrap();
        assert!(!crate::reporter::snapshot::matches_committed(
            root.path(),
            &s,
            &view
        ));
        assert!(committed.with_extension("snap.new").exists());
    }
}
