//! The snapshot regression suite under libtest-mimic: one trial per
//! scenario and variant, named `<slug>::<variant>`, each in a child process.
//! Works under `cargo test` and `cargo nextest run`.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock, RwLock};

use casebook_model::Outcome;
use casebook_model::Scenario;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::environment::{self, Environment, Unusable};
use crate::judge::Verdict;
use crate::{REQUIRE_GPU_ENV, child, report, snapshot, trial, workspace};

/// Exit code when a filter matches no trial.
pub const NO_MATCH_EXIT: u8 = 4;

/// The whole `main` of a suite binary.
pub fn main(catalog: Vec<Scenario>, extra: Vec<Trial>) -> ExitCode {
    child::serve_if_child(&catalog);
    let root = workspace::root();
    workspace::pin_insta_root(&root);
    let args = Arguments::from_args();
    let catalog = Arc::new(catalog);
    let mut trials = catalog_checks(&catalog, &root);
    trials.extend(extra);
    trials.extend(variant_trials(&catalog, &root));
    if let Some(filter) = &args.filter
        && trials.iter().all(|t| args.is_filtered_out(t))
    {
        eprintln!("error: the filter {filter:?} matches no trial (try --list)");
        return ExitCode::from(NO_MATCH_EXIT);
    }
    libtest_mimic::run(&args, trials).exit_code()
}

fn gpu() -> &'static Result<Environment, Unusable> {
    static GPU: OnceLock<Result<Environment, Unusable>> = OnceLock::new();
    GPU.get_or_init(environment::detect)
}

/// Exclusive scenarios take it for writing, the others for reading, so an
/// exclusive one never shares the GPU.
static GPU_SHARE: RwLock<()> = RwLock::new(());

/// One trial per variant.
///
/// Without a GPU, a GPU trial decides at run time that it is ignored and
/// says why; cargo test prints the reason. nextest, though, counts a
/// run-time ignore as a pass, so under nextest such a trial is marked
/// ignored when the trials are listed, and shows as skipped.
pub fn variant_trials(catalog: &Arc<Vec<Scenario>>, root: &Path) -> Vec<Trial> {
    let under_nextest =
        std::env::var_os("NEXTEST_RUN_ID").is_some() || std::env::var_os("NEXTEST").is_some();
    let skip_now = under_nextest && std::env::var_os(REQUIRE_GPU_ENV).is_none();
    let mut trials = Vec::new();
    for (si, scenario) in catalog.iter().enumerate() {
        for (vi, variant) in scenario.variants.iter().enumerate() {
            let catalog = Arc::clone(catalog);
            let root = root.to_path_buf();
            let ignored = skip_now
                && ((scenario.needs_gpu() && gpu().is_err())
                    || crate::pytorch::skip_reason(variant).is_some());
            trials.push(
                Trial::ignorable_test(scenario.trial_name(variant), move || {
                    run_variant(&catalog[si], vi, &root)
                })
                .with_ignored_flag(ignored),
            );
        }
    }
    trials
}

fn run_variant(scenario: &Scenario, vi: usize, root: &Path) -> Result<Completion, Failed> {
    let variant = &scenario.variants[vi];
    if scenario.needs_gpu()
        && let Err(reason) = gpu()
    {
        if std::env::var_os(REQUIRE_GPU_ENV).is_some() {
            return Err(format!("no GPU, and {REQUIRE_GPU_ENV} is set: {reason}").into());
        }
        let also = crate::pytorch::skip_reason(variant)
            .map(|torch| format!("; it also {torch}"))
            .unwrap_or_default();
        return Ok(Completion::ignored_with(format!(
            "needs a GPU: {reason}{also}"
        )));
    }
    // Without torch a PyTorch trial is skipped, even where a GPU is required:
    // the rest of the run stands on its own.
    if let Some(reason) = crate::pytorch::skip_reason(variant) {
        return Ok(Completion::ignored_with(reason));
    }
    let record = {
        let _share = if scenario.runs_alone(variant) {
            (
                None,
                Some(GPU_SHARE.write().unwrap_or_else(|p| p.into_inner())),
            )
        } else {
            (
                Some(GPU_SHARE.read().unwrap_or_else(|p| p.into_inner())),
                None,
            )
        };
        trial::run(scenario, variant).map_err(|e| format!("cannot start the child: {e}"))?
    };
    let snapshot = catch_unwind(AssertUnwindSafe(|| {
        snapshot::assert(root, scenario, &record.view)
    }));
    if record.judgement.verdict == Verdict::Fail {
        return Err(report::failure_details(&record).into());
    }
    if snapshot.is_err() {
        return Err(format!(
            "the outcome differs from {}: review the .snap.new beside it, then `cargo xtask bless`",
            snapshot::path(root, scenario.slug, variant.name).display()
        )
        .into());
    }
    Ok(Completion::Completed)
}

/// Checks of the catalogue itself, which need no GPU.
pub fn catalog_checks(catalog: &Arc<Vec<Scenario>>, root: &Path) -> Vec<Trial> {
    let c = Arc::clone(catalog);
    let names = Trial::test("catalog::declarations-are-consistent", move || {
        check_declarations(&c).map_err(Failed::from)
    });
    let c = Arc::clone(catalog);
    let r = root.to_path_buf();
    let snaps = Trial::test("catalog::every-variant-has-a-passing-snapshot", move || {
        check_snapshots(&c, &r).map_err(Failed::from)
    });
    let c = Arc::clone(catalog);
    let r = root.to_path_buf();
    let evidence = Trial::test("catalog::evidence-covers-every-variant", move || {
        check_evidence(&c, &r, &r.join(report::EVIDENCE_JSON)).map_err(Failed::from)
    });
    let c = Arc::clone(catalog);
    let r = root.to_path_buf();
    let fair = Trial::test("catalog::every-judge-can-go-either-way", move || {
        check_fairness(&c, &r.join(report::EVIDENCE_JSON)).map_err(Failed::from)
    });
    let c = Arc::clone(catalog);
    let r = root.to_path_buf();
    let python = Trial::test("catalog::python-variants-use-declared-names", move || {
        crate::pytorch::check_python_variants(&c, &r).map_err(Failed::from)
    });
    vec![names, snaps, evidence, fair, python]
}

/// Every claim's judge, fed its deciding variant's recorded outcome changed
/// in what it reads, reaches both sides its claim declares
/// ([`crate::fairness`]).
pub fn check_fairness(catalog: &[Scenario], path: &Path) -> Result<(), String> {
    if catalog.iter().all(|s| s.claims.is_empty()) {
        return Ok(());
    }
    let report = read_report(path)?;
    let problems = crate::fairness::one_sided(catalog, &report);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Slugs, variant names and claim ids are unique, every scenario pairs a
/// broken variant with a fixed one, and each claim is judged by a variant
/// that exists.
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
                problems.push(format!("{}::{} is declared twice", s.slug, v.name));
            }
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
/// variant lands without evidence from a GPU run.
pub fn check_snapshots(catalog: &[Scenario], root: &Path) -> Result<(), String> {
    let mut problems = Vec::new();
    for s in catalog {
        for v in &s.variants {
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
            if s.variant(variant).is_none() && variant != crate::snapshot::MATRIX {
                problems.push(format!(
                    "{} belongs to no declared variant",
                    dir.join(&name).display()
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
                        "claim {} reads \"{name}\", which {}::{} did not record",
                        claim.id, s.slug, v.name
                    )
                })
        })
        .collect()
}

/// The report at `path`, or one line that names the file and what is wrong.
fn read_report(path: &Path) -> Result<report::Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The committed report of the latest GPU run names every variant, every one
/// of them passed, judging its recorded outcomes again with the code as it is
/// now gives the same verdicts and claim verdicts, and the snapshot rebuilt
/// from each recorded outcome is the committed `.snap`, to the byte.
pub fn check_evidence(catalog: &[Scenario], root: &Path, path: &Path) -> Result<(), String> {
    if catalog.iter().all(|s| s.variants.is_empty()) {
        return Ok(());
    }
    let report = read_report(path)?;
    let mut problems = Vec::new();
    for s in catalog {
        for v in &s.variants {
            match report
                .results
                .iter()
                .find(|r| r.scenario == s.slug && r.variant == v.name)
            {
                None => problems.push(format!(
                    "{}::{} is not in {}",
                    s.slug,
                    v.name,
                    path.display()
                )),
                Some(r) if r.verdict != Verdict::Pass => problems.push(format!(
                    "{}::{} did not pass in {}",
                    s.slug,
                    v.name,
                    path.display()
                )),
                Some(r) => {
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
                            "{}::{}: judged again from its recorded outcome, the verdicts differ \
                             from those in {}",
                            s.slug,
                            v.name,
                            path.display()
                        ));
                    }
                    problems.extend(unrecorded_reads(s, v, &r.outcome));
                    let view = snapshot::SnapshotView::new(s, v, &r.outcome, &now, &claims);
                    if snapshot::compare(root, s, &view) != snapshot::SnapshotStatus::Matched {
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
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use casebook_model::{
        CheckName, Claim, ClaimVerdict, Event, Outcome, Program, Reach, Recorder, Requirement,
        Scenario, Variant,
    };

    const WRITTEN: CheckName = CheckName("written");
    const NEVER_WRITTEN: CheckName = CheckName("never written");

    fn noop(_: &mut Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    fn scenario(claims: &'static [Claim]) -> Scenario {
        Scenario {
            slug: "s",
            title: "",
            cause: "",
            symptoms: &[],
            requires: &[Requirement::Gpu],
            claims,
            variants: vec![Variant::fixed("fixed", Program::host(noop))],
        }
    }

    #[test]
    fn a_judge_reading_a_name_the_variant_never_wrote_is_reported() {
        const CLAIMS: &[Claim] = &[
            Claim {
                id: "reads-what-is-there",
                seed: "",
                quote: "",
                judged_by: "fixed",
                reach: Reach::Either,
                judge: |o| ClaimVerdict::confirmed_if(o.check(WRITTEN)),
            },
            Claim {
                id: "waits-on-nothing",
                seed: "",
                quote: "",
                judged_by: "fixed",
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
}
