//! Lists, for each claim the latest GPU run decided, the variants of its
//! scenario whose recorded outcome the claim's own judge decides otherwise:
//! the candidates for its control. `cargo run --example control_candidates`.

use casebook_model::ClaimVerdict;
use casebook_report::Report;

fn main() -> anyhow::Result<()> {
    let text = std::fs::read_to_string("docs/evidence/latest.json")?;
    let report: Report = serde_json::from_str(&text)?;
    for s in cuda_casebook::catalog() {
        for c in s.claims {
            let Some(decided) = report
                .results
                .iter()
                .find(|r| r.scenario == s.slug && r.variant == c.judged_by)
                .and_then(|r| r.claims.iter().find(|x| x.id == c.id))
                .map(|x| x.verdict)
            else {
                continue;
            };
            let others: Vec<String> = report
                .results
                .iter()
                .filter(|r| r.scenario == s.slug && r.variant != c.judged_by)
                .map(|r| (r.variant.clone(), c.verdict(&r.outcome)))
                .filter(|(_, v)| *v != decided && *v != ClaimVerdict::Undecided)
                .map(|(v, verdict)| format!("{v}={verdict:?}"))
                .collect();
            println!(
                "{}\t{}\t{}\t{:?}\t{:?}\t{}",
                s.slug,
                c.id,
                c.judged_by,
                decided,
                c.control,
                others.join(" ")
            );
        }
    }
    Ok(())
}
