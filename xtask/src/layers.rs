//! The layering rules, read from `cargo metadata`: a scenario crate never
//! depends on the runner, the runner never on the CUDA build, and the
//! cookbook builds without nvcc. Checked by a test of this crate.

use std::collections::{BTreeMap, BTreeSet};

/// The packages each workspace package depends on, directly or not.
pub fn closures(metadata: &serde_json::Value) -> BTreeMap<String, BTreeSet<String>> {
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let direct: BTreeMap<&str, Vec<&str>> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| {
            let deps = n["deps"]
                .as_array()?
                .iter()
                .filter_map(|d| name_of.get(d["pkg"].as_str()?).copied())
                .collect();
            Some((*name_of.get(n["id"].as_str()?)?, deps))
        })
        .collect();
    let members = metadata["workspace_members"]
        .as_array()
        .into_iter()
        .flatten();
    members
        .filter_map(|id| name_of.get(id.as_str()?).copied())
        .map(|root| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![root];
            while let Some(p) = stack.pop() {
                for d in direct.get(p).into_iter().flatten() {
                    if seen.insert(d.to_string()) {
                        stack.push(d);
                    }
                }
            }
            (root.to_owned(), seen)
        })
        .collect()
}

/// Every broken rule, in words.
pub fn violations(closures: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    for (package, deps) in closures {
        let reader = package == "casebook-cookbook" || package == "casebook-report";
        if (package.starts_with("scenario-") || reader) && deps.contains("casebook-harness") {
            problems.push(format!(
                "{package} depends on the runner (casebook-harness)"
            ));
        }
    }
    let cuda_build = ["casebook-kernels", "casebook-build"];
    for package in [
        "casebook-cookbook",
        "casebook-report",
        "casebook-harness",
        "casebook-runtime",
        "casebook-model",
    ] {
        for d in cuda_build {
            if closures.get(package).is_some_and(|deps| deps.contains(d)) {
                problems.push(format!("{package} depends on the CUDA build ({d})"));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_keeps_its_layers() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = std::process::Command::new(cargo)
            .args(["metadata", "--format-version", "1"])
            .current_dir(crate::root())
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let closures = closures(&metadata);
        assert!(closures.contains_key("casebook-cookbook"));
        assert_eq!(violations(&closures), Vec::<String>::new());
    }

    #[test]
    fn a_scenario_on_the_runner_is_a_violation() {
        let closures = BTreeMap::from([(
            "scenario-x".to_owned(),
            BTreeSet::from(["casebook-harness".to_owned()]),
        )]);
        assert_eq!(
            violations(&closures),
            vec!["scenario-x depends on the runner (casebook-harness)"]
        );
    }
}
