//! Whether a claim's judge can go either way. Each judge is fed its deciding
//! variant's recorded outcome, changed in what the judge reads: every yes/no
//! flipped, every figure scaled, every text replaced, every value another
//! variant recorded under the same name, the failed calls removed or swapped for another variant's.
//! A judge that never reaches "confirmed" (or "partly", where its claim
//! declares a cap) and "refuted" on any of them could not have come out
//! otherwise, whatever ran on the GPU.

use std::collections::{BTreeMap, BTreeSet};

use casebook_model::{
    Check, Claim, ClaimVerdict, Outcome, Reach, Scenario, Step, Termination, audit,
};
use serde_json::Value;

use casebook_report::Report;

/// At most this many changed outcomes per claim and round.
const MAX_CASES: usize = 20_000;

/// What could stand in a recorded outcome under one name.
#[derive(Debug, Clone, PartialEq)]
enum Stand {
    Fact(Option<Value>),
    Check(Option<bool>),
    Measure(Option<f64>),
}

/// The values each name takes anywhere in a report, by kind.
#[derive(Default)]
struct Pool {
    facts: BTreeMap<String, Vec<Value>>,
    checks: BTreeSet<String>,
    measures: BTreeMap<String, Vec<f64>>,
}

impl Pool {
    fn of(outcomes: &[&Outcome]) -> Pool {
        let mut pool = Pool::default();
        for o in outcomes {
            for (k, v) in &o.facts {
                let vs = pool.facts.entry(k.clone()).or_default();
                if !vs.contains(v) {
                    vs.push(v.clone());
                }
            }
            for c in &o.checks {
                pool.checks.insert(c.name.clone());
            }
            for (k, m) in &o.measures {
                pool.measures.entry(k.clone()).or_default().push(m.value);
            }
        }
        pool
    }

    /// What a judge may find under `name`, starting with the recorded value.
    fn stands(&self, name: &str, base: &Outcome) -> Vec<Stand> {
        let mut out = Vec::new();
        if let Some(values) = self.facts.get(name) {
            let mut vs: Vec<Value> = values.clone();
            for v in values {
                if let Some(b) = v.as_bool() {
                    vs.push(Value::Bool(!b));
                }
                if let Some(x) = v.as_f64() {
                    vs.extend(scaled(x).into_iter().map(Value::from));
                }
                if let Some(text) = v.as_str() {
                    // Any other text: an error name where success was recorded.
                    vs.push(Value::from(format!("{text} (another value)")));
                    // A call's result recorded as an error could have been
                    // its API's success.
                    if let Some(success) = success_of(text) {
                        vs.push(Value::from(success));
                    }
                }
            }
            if let Some(v) = base.fact_named(name) {
                out.push(Stand::Fact(Some(v.clone())));
            }
            for v in vs {
                if !out.contains(&Stand::Fact(Some(v.clone()))) {
                    out.push(Stand::Fact(Some(v)));
                }
            }
            out.push(Stand::Fact(None));
        }
        if self.checks.contains(name) {
            out.extend([
                Stand::Check(base.check_named(name)),
                Stand::Check(Some(true)),
                Stand::Check(Some(false)),
                Stand::Check(None),
            ]);
        }
        if let Some(values) = self.measures.get(name) {
            if let Some(x) = base.measure_named(name) {
                out.push(Stand::Measure(Some(x)));
                out.extend(scaled(x).into_iter().map(|y| Stand::Measure(Some(y))));
            }
            out.extend(values.iter().map(|&y| Stand::Measure(Some(y))));
            out.push(Stand::Measure(None));
        }
        out.dedup();
        out
    }
}

/// The success result of the API whose error name `text` is: the runtime's
/// `cudaSuccess` for a `cudaError…`, the driver's `CUDA_SUCCESS` for a
/// `CUDA_ERROR_…`.
fn success_of(text: &str) -> Option<&'static str> {
    if text.starts_with("cudaError") {
        Some("cudaSuccess")
    } else if text.starts_with("CUDA_ERROR_") {
        Some("CUDA_SUCCESS")
    } else {
        None
    }
}

/// A figure, scaled down to nothing and up by orders of magnitude.
fn scaled(x: f64) -> Vec<f64> {
    let mut out: Vec<f64> = [0.0, 0.01, 0.5, 0.99, 1.01, 2.0, 100.0]
        .iter()
        .map(|f| x * f)
        .collect();
    if x == 0.0 {
        out.extend([1.0, 0.5, 1e9]);
    }
    out
}

fn set(o: &mut Outcome, name: &str, stand: &Stand) {
    match stand {
        Stand::Fact(v) => match v {
            Some(v) => {
                o.facts.insert(name.to_owned(), v.clone());
            }
            None => {
                o.facts.remove(name);
            }
        },
        Stand::Check(v) => {
            o.checks.retain(|c| c.name != name);
            if let Some(ok) = v {
                o.checks.push(Check {
                    name: name.to_owned(),
                    ok: *ok,
                });
            }
        }
        Stand::Measure(v) => match v {
            Some(value) => {
                let unit = o
                    .measures
                    .get(name)
                    .map_or(casebook_model::Unit::Count, |m| m.unit);
                o.measures.insert(
                    name.to_owned(),
                    casebook_model::Measure {
                        value: *value,
                        unit,
                    },
                );
            }
            None => {
                o.measures.remove(name);
            }
        },
    }
}

/// The calls a judge may find, and how the run ended: as recorded, with no
/// call failing and the run completed, and as each other variant of the
/// scenario recorded them.
fn step_sets(base: &Outcome, siblings: &[&Outcome]) -> Vec<(Vec<Step>, Termination)> {
    let mut out = vec![(base.steps.clone(), base.termination.clone())];
    let cleared: Vec<Step> = base
        .steps
        .iter()
        .filter(|s| !s.is_error() || s.tolerated)
        .cloned()
        .collect();
    out.push((cleared, Termination::Completed));
    for o in siblings {
        let theirs = (o.steps.clone(), o.termination.clone());
        if !out.contains(&theirs) {
            out.push(theirs);
        }
    }
    out
}

/// The verdicts `claim`'s judge reaches on `base` and its changed forms,
/// before its declared [`Reach`] applies.
fn reachable(
    claim: &Claim,
    base: &Outcome,
    pool: &Pool,
    siblings: &[&Outcome],
) -> BTreeSet<ClaimVerdict> {
    let mut verdicts = BTreeSet::new();
    let steps = step_sets(base, siblings);
    let (first, mut names) = audit::names_read(|| (claim.judge)(base));
    verdicts.insert(first);
    // A changed value can lead the judge down a branch that reads more
    // names: go again with those, a few rounds at most.
    for _ in 0..3 {
        let list: Vec<&'static str> = names.iter().copied().collect();
        let choices: Vec<Vec<Stand>> = list.iter().map(|n| pool.stands(n, base)).collect();
        let cases: usize = choices.iter().map(|c| c.len().max(1)).product::<usize>() * steps.len();
        let mut more = BTreeSet::new();
        let mut index = vec![0usize; list.len()];
        for case in 0..cases.min(MAX_CASES) {
            let mut o = base.clone();
            (o.steps, o.termination) = steps[case % steps.len()].clone();
            for (i, name) in list.iter().enumerate() {
                if let Some(stand) = choices[i].get(index[i]) {
                    set(&mut o, name, stand);
                }
            }
            let (v, read) = audit::names_read(|| (claim.judge)(&o));
            verdicts.insert(v);
            more.extend(read);
            if case % steps.len() == steps.len() - 1 {
                // Next combination of values: count in mixed radix.
                for (i, choice) in choices.iter().enumerate() {
                    index[i] += 1;
                    if index[i] < choice.len() {
                        break;
                    }
                    index[i] = 0;
                }
            }
        }
        let before = names.len();
        names.extend(more);
        if names.len() == before {
            break;
        }
    }
    verdicts
}

/// Claims whose judge cannot reach what its declared [`Reach`] says, on the
/// outcomes `report` recorded: one line each. Claims whose deciding variant
/// is not in the report are left out (the evidence check names those).
pub fn one_sided(catalog: &[Scenario], report: &Report) -> Vec<String> {
    let outcomes: Vec<&Outcome> = report.results.iter().map(|r| &r.outcome).collect();
    let pool = Pool::of(&outcomes);
    let mut problems = Vec::new();
    for s in catalog {
        let siblings: Vec<&Outcome> = report
            .results
            .iter()
            .filter(|r| r.scenario == s.slug)
            .map(|r| &r.outcome)
            .collect();
        for claim in s.claims {
            let Some(entry) = report
                .results
                .iter()
                .find(|r| r.scenario == s.slug && r.variant == claim.judged_by)
            else {
                continue;
            };
            let reached = reachable(claim, &entry.outcome, &pool, &siblings);
            if let Some(problem) = short_of(claim, &reached) {
                problems.push(problem);
            }
        }
    }
    problems
}

/// What `reached` lacks of what `claim` declares, if anything.
pub fn short_of(claim: &Claim, reached: &BTreeSet<ClaimVerdict>) -> Option<String> {
    let words = |set: &BTreeSet<ClaimVerdict>| {
        set.iter()
            .map(|v| format!("{v:?}").to_lowercase())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let refutes = reached.contains(&ClaimVerdict::Refuted);
    let (upholds, top) = match claim.reach {
        Reach::Either => (reached.contains(&ClaimVerdict::Confirmed), "confirmed"),
        Reach::AtBestPartly(_) => (
            reached.contains(&ClaimVerdict::Confirmed) || reached.contains(&ClaimVerdict::Partly),
            "confirmed or partly",
        ),
    };
    if refutes && upholds {
        return None;
    }
    let missing = match (upholds, refutes) {
        (false, false) => format!("{top} nor refuted"),
        (false, true) => top.to_owned(),
        _ => "refuted".to_owned(),
    };
    Some(format!(
        "claim {} ({}): its judge never says {missing}; it reached only {}",
        claim.id,
        claim.judged_by,
        words(reached)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use casebook_model::{FactName, Source};

    const SEEN: FactName = FactName("the effect was seen");
    const COUNT: FactName = FactName("times seen");

    fn claim(judge: fn(&Outcome) -> ClaimVerdict, reach: Reach) -> Claim {
        Claim {
            id: "000-test",
            source: Source::Seed("000_test.txt"),
            quote: "q",
            judged_by: "v",
            control: casebook_model::Control::Pending,
            judge,
            reach,
        }
    }

    fn outcome(seen: bool, count: f64) -> Outcome {
        Outcome::empty()
            .with_fact(SEEN, seen)
            .with_fact(COUNT, count)
    }

    fn reach_of(claim: &Claim, base: &Outcome) -> BTreeSet<ClaimVerdict> {
        let pool = Pool::of(&[base]);
        reachable(claim, base, &pool, &[])
    }

    #[test]
    fn a_judge_on_a_yes_no_fact_goes_either_way() {
        let c = claim(|o| ClaimVerdict::confirmed_if(o.flag(SEEN)), Reach::Either);
        let reached = reach_of(&c, &outcome(true, 3.0));
        assert!(reached.contains(&ClaimVerdict::Confirmed));
        assert!(reached.contains(&ClaimVerdict::Refuted));
        assert_eq!(short_of(&c, &reached), None);
    }

    #[test]
    fn a_judge_that_ignores_the_run_is_caught() {
        let c = claim(
            |o| match o.flag(SEEN) {
                Some(_) => ClaimVerdict::Refuted,
                None => ClaimVerdict::Undecided,
            },
            Reach::Either,
        );
        let reached = reach_of(&c, &outcome(true, 3.0));
        let problem = short_of(&c, &reached).expect("one-sided");
        assert!(problem.contains("never says confirmed"), "{problem}");
    }

    #[test]
    fn a_result_recorded_as_an_error_could_have_been_success() {
        const RESULT: FactName = FactName("the write's result");
        let c = claim(
            |o| match o.fact(RESULT).and_then(Value::as_str) {
                Some("cudaSuccess") => ClaimVerdict::Confirmed,
                Some(_) => ClaimVerdict::Refuted,
                None => ClaimVerdict::Undecided,
            },
            Reach::Either,
        );
        let base = Outcome::empty().with_fact(RESULT, "cudaErrorIllegalAddress");
        assert_eq!(short_of(&c, &reach_of(&c, &base)), None);
        // Any other text is only ever another text.
        let base = base.with_fact(RESULT, "written");
        assert!(short_of(&c, &reach_of(&c, &base)).is_some());
    }

    #[test]
    fn a_threshold_on_a_figure_is_reached_by_scaling() {
        let c = claim(
            |o| match o.fact(COUNT).and_then(Value::as_f64) {
                Some(n) if n > 10.0 => ClaimVerdict::Confirmed,
                Some(_) => ClaimVerdict::Refuted,
                None => ClaimVerdict::Undecided,
            },
            Reach::Either,
        );
        assert_eq!(short_of(&c, &reach_of(&c, &outcome(false, 3.0))), None);
    }

    #[test]
    fn a_cap_asks_for_partly_and_refuted() {
        let capped = claim(
            |o| ClaimVerdict::when(o.flag(SEEN), ClaimVerdict::Partly, ClaimVerdict::Refuted),
            Reach::AtBestPartly("tests half the sentence"),
        );
        assert_eq!(
            short_of(&capped, &reach_of(&capped, &outcome(true, 1.0))),
            None
        );
        let uncapped = claim(capped.judge, Reach::Either);
        assert!(short_of(&uncapped, &reach_of(&uncapped, &outcome(true, 1.0))).is_some());
        assert_eq!(
            capped.verdict(&outcome(true, 1.0)),
            ClaimVerdict::Partly,
            "the cap holds"
        );
    }

    #[test]
    fn failed_calls_can_be_taken_away() {
        let c = claim(
            |o| ClaimVerdict::confirmed_if(o.first_error_is("CUDA_ERROR_OUT_OF_MEMORY")),
            Reach::Either,
        );
        let base = Outcome::empty().with_step("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY");
        let sibling = Outcome::empty().with_step("cuMemAlloc", "CUDA_ERROR_INVALID_VALUE");
        let pool = Pool::of(&[&base]);
        let reached = reachable(&c, &base, &pool, &[&sibling]);
        assert_eq!(short_of(&c, &reached), None, "{reached:?}");
    }
}
