//! The ledger's history: every change of a claim's standing, old and new,
//! with the reason, as a page, and the check that holds the history to
//! where the ledger stands now.

use std::fmt::Write as _;

use casebook_model::ledger::{Change, Standing, Undecided, Why};
use casebook_model::{ClaimVerdict, Scenario};
use casebook_report::Report;

use crate::words::results;

/// Where the page is written.
pub const PAGE: &str = "docs/src/ledger-history.md";

/// Where claim `id` stands now: its run's verdict in `report`, "decided by
/// its run" where the run is still to come, or why no run decides it.
/// `None` for an id the ledger does not hold.
pub fn standing_now(
    catalog: &[Scenario],
    undecided: &[Undecided],
    report: Option<&Report>,
    id: &str,
) -> Option<Standing> {
    for s in catalog {
        if let Some(c) = s.claims.iter().find(|c| c.id == id) {
            let verdict = results(report, s.slug)
                .filter(|r| r.variant == c.judged_by)
                .flat_map(|r| r.claims.iter())
                .find(|r| r.id == id)
                .map(|r| r.verdict);
            return Some(match verdict {
                Some(ClaimVerdict::Confirmed) => Standing::Confirmed,
                Some(ClaimVerdict::Refuted) => Standing::Refuted,
                Some(ClaimVerdict::Partly) => Standing::Partly,
                Some(ClaimVerdict::Undecided) | None => Standing::Run,
            });
        }
    }
    undecided.iter().find(|u| u.id == id).map(|u| match u.why {
        Why::Untestable(_) => Standing::Untestable,
        Why::NotYetTested(_) => Standing::NotYetTested,
    })
}

/// Whether the change to `to` has landed where the ledger stands at `now`:
/// a change to "decided by its run" lands with any verdict of that run.
fn landed(to: Standing, now: Standing) -> bool {
    to == now
        || to == Standing::Run
            && matches!(
                now,
                Standing::Confirmed | Standing::Refuted | Standing::Partly
            )
}

/// What is wrong with `history`: a claim the ledger does not hold, a change
/// that does not start where the claim's previous change ended, a claim
/// whose last change neither landed where the ledger stands now nor waits,
/// at its old standing, for the run that makes it.
pub fn problems(
    catalog: &[Scenario],
    undecided: &[Undecided],
    history: &[Change],
    report: Option<&Report>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut last: std::collections::BTreeMap<&str, &Change> = Default::default();
    for change in history {
        if change.from == change.to {
            problems.push(format!(
                "{}: a change from {} to the same",
                change.id,
                change.from.words()
            ));
        }
        if let Some(previous) = last.get(change.id)
            && !landed(previous.to, change.from)
            && previous.to != change.from
        {
            problems.push(format!(
                "{}: the change at {} starts from {}, but the one before ended at {}",
                change.id,
                change.commit,
                change.from.words(),
                previous.to.words()
            ));
        }
        last.insert(change.id, change);
    }
    for (id, change) in last {
        let Some(now) = standing_now(catalog, undecided, report, id) else {
            problems.push(format!("{id}: in the ledger's history, not in the ledger"));
            continue;
        };
        if !landed(change.to, now) && change.from != now {
            problems.push(format!(
                "{id}: its last change ({}) goes from {} to {}, and the ledger stands at {}: \
                 add the change that explains it",
                change.commit,
                change.from.words(),
                change.to.words(),
                now.words()
            ));
        }
    }
    problems
}

/// The page: every change, oldest first, and where each claim stands now.
pub fn page(
    catalog: &[Scenario],
    undecided: &[Undecided],
    history: &[Change],
    report: Option<&Report>,
) -> String {
    let mut md = String::from(
        "# How the verdicts changed\n\nEvery change of a claim's standing in the ledger since it \
         had verdicts, oldest first: what it was, what it became, the commit that changed it and \
         why. A change that waits for the GPU run of its commit says so; the committed run's \
         verdict stands meanwhile. The page is made from `HISTORY` in `src/ledger.rs`, and a CPU \
         test holds each claim's last change to where the [claims](claims.md) page stands now. \
         Most changes follow an independent reading of the verdicts against the articles and \
         the evidence, each committed whole: `docs/evidence/claims-audit-2.md` to \
         `claims-audit-7.md` (the fifth and the seventh re-read every claim and list what \
         changed after them; the sixth re-read the five verdicts the fifth's second round \
         changed or re-decided; audits 8 to 10, of the verdicts changed since, are appended to \
         the seventh), `claims-audit-11.md`, which re-read every claim again: of 149, none \
         unfair, 23 doubtful, `claims-audit-12.md`, which re-read the ten verdicts changed \
         after it: three doubtful, `claims-audit-13.md` and `claims-audit-14.md`, which \
         re-read every claim again (13: one unfair, 19 doubtful; 14: one unfair, 16 doubtful) \
         and list what changed after them, `claims-audit-15.md`, which re-read eighteen \
         of audit 14's doubtful, unfair and changed claims: none unfair, six doubtful, \
         `claims-audit-16.md` to `claims-audit-20.md` (the eighteenth re-read every claim; \
         the others, the claims changed or newly run since the one before), and \
         `claims-audit-21.md`, which re-read every claim again and the articles for sentences \
         no claim quotes: of 150, none unfair, 22 doubtful, and `claims-audit-22.md`, which \
         re-read the ten claims changed or new after it: none unfair, two doubtful, both changed \
         since, and `claims-audit-23.md`, which re-read the claims and the case changed or new \
         after it: none unfair, two doubtful, both changed since, and `claims-audit-24.md`, \
         which re-read the three claims given new runs after it: none unfair, two doubtful, \
         what they need listed for the next run.\n\n\
         | claim | was | became | at | why | now |\n|---|---|---|---|---|---|\n",
    );
    for (i, change) in history.iter().enumerate() {
        let later = history[i + 1..].iter().any(|c| c.id == change.id);
        let now = match standing_now(catalog, undecided, report, change.id) {
            _ if later => "changed again below".to_owned(),
            Some(now) if landed(change.to, now) => now.words().to_owned(),
            Some(now) => format!("{}: awaits the GPU run of this change", now.words()),
            None => "not in the ledger".to_owned(),
        };
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | `{}` | {} | {now} |",
            change.id,
            change.from.words(),
            change.to.words(),
            change.commit,
            change.why.replace('|', "\\|")
        );
    }
    let _ = writeln!(md, "\n{} changes.", history.len());
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEDGER: &[Undecided] = &[
        Undecided {
            id: "a",
            seed: "s",
            quote: "q",
            why: Why::Untestable("r"),
        },
        Undecided {
            id: "b",
            seed: "s",
            quote: "q",
            why: Why::NotYetTested("r"),
        },
    ];

    fn change(id: &'static str, from: Standing, to: Standing) -> Change {
        Change {
            id,
            commit: "c",
            from,
            to,
            why: "w",
        }
    }

    #[test]
    fn a_claims_last_change_must_end_where_the_ledger_stands_or_wait_where_it_began() {
        use Standing::*;
        let check = |history: &[Change]| problems(&[], LEDGER, history, None);
        assert!(check(&[change("a", NotYetTested, Untestable)]).is_empty());
        // Waiting for its run: the ledger still stands where the change began.
        assert!(check(&[change("b", NotYetTested, Run)]).is_empty());
        // Neither where it ended nor where it began.
        assert_eq!(check(&[change("a", Refuted, Confirmed)]).len(), 1);
        // A change that starts elsewhere than the previous one ended.
        assert_eq!(
            check(&[
                change("a", Confirmed, NotYetTested),
                change("a", Refuted, Untestable)
            ])
            .len(),
            1
        );
        // A claim the ledger does not hold, and a change to the same.
        assert_eq!(check(&[change("z", Refuted, Confirmed)]).len(), 1);
        assert_eq!(check(&[change("a", Untestable, Untestable)]).len(), 1);
    }
}
