//! `cargo xtask new-scenario <slug>`: a case's folder that builds, as
//! clippy's `cargo dev new_lint` writes a lint: the manifest, the build
//! script, the vocabulary, a broken and a fixed variant (cudarc) that
//! record one step and one check, an empty `pasted.toml`, and the two lines
//! that register the case (the catalogue in `src/lib.rs`, the dependency in
//! the root `Cargo.toml`). What remains is the case itself: the failure,
//! the fix, the claims with their controls, the users' texts.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};

#[derive(clap::Args)]
pub struct Args {
    /// The case's name: lowercase words joined by `-` (`misaligned-address`).
    slug: String,
}

/// Whether `slug` is a case's name: lowercase ASCII words joined by `-`.
fn valid(slug: &str) -> bool {
    !slug.is_empty()
        && slug.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && slug.starts_with(|c: char| c.is_ascii_lowercase())
}

/// The files of a new case, relative to its folder.
fn files(slug: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "Cargo.toml",
            format!(
                "[package]\nname = \"scenario-{slug}\"\nversion = \"0.1.0\"\ndescription = \"cuda-casebook: {slug} (say what fails, in a line)\"\nedition.workspace = true\nrust-version.workspace = true\nlicense.workspace = true\npublish.workspace = true\n\n[dependencies]\ncasebook-model.workspace = true\ncudarc.workspace = true\nanyhow.workspace = true\n\n[build-dependencies]\ncasebook-build.workspace = true\n"
            ),
        ),
        ("build.rs", "casebook_build::build_scenario!();\n".to_owned()),
        (
            "names.toml",
            "[checks]\nWORKED = \"the work ran\"\n".to_owned(),
        ),
        (
            "pasted.toml",
            "# What users paste for this failure, copied from public reports. Each text is\n# the error as the user pasted it: the error lines, not the whole traceback.\n# `cause`: who in the thread traced it to this case's cause, and how.\n".to_owned(),
        ),
        (
            "src/lib.rs",
            format!(
                "//! `{slug}`: what fails, how the broken variant provokes it, and what the\n//! fixed one changes.\n\nuse casebook_model::{{Requirement, Scenario, Symptom, Variant, cudarc}};\n\nmod broken;\nmod fixed;\n\ncasebook_model::names_module!();\n\npub fn scenario() -> Scenario {{\n    Scenario {{\n        slug: \"{slug}\",\n        title: \"The error text users see (what the case reproduces)\",\n        cause: \"The real cause, in two sentences.\",\n        fix: \"The fix, in a sentence.\",\n        symptoms: &[],\n        requires: Requirement::GPU,\n        reports: &[],\n        claims: &[],\n        variants: vec![\n            Variant::broken(\"broken\", Symptom::check_failed(WORKED), cudarc!(broken)),\n            Variant::fixed(\"fixed\", cudarc!(fixed)),\n        ],\n    }}\n}}\n"
            ),
        ),
        (
            "src/broken.rs",
            "//! The broken program: what it does wrong.\n\nuse casebook_model::{Recorder, device};\n\nuse crate::names::*;\n\n// ANCHOR: run\npub fn run(rec: &mut Recorder) -> anyhow::Result<()> {\n    let _ctx = device::context(rec)?;\n    rec.check(WORKED, false); // BUG: the failure, provoked\n    Ok(())\n}\n// ANCHOR_END: run\n".to_owned(),
        ),
        (
            "src/fixed.rs",
            "//! The fixed program: the same work, with the fix.\n\nuse casebook_model::{Recorder, device};\n\nuse crate::names::*;\n\n// ANCHOR: run\npub fn run(rec: &mut Recorder) -> anyhow::Result<()> {\n    let _ctx = device::context(rec)?;\n    rec.check(WORKED, true); // FIX: what changes\n    Ok(())\n}\n// ANCHOR_END: run\n".to_owned(),
        ),
    ]
}

/// Writes the case's folder under `root` and registers it there.
pub fn create(root: &Path, slug: &str) -> anyhow::Result<()> {
    if !valid(slug) {
        bail!("`{slug}` is no case name: lowercase words joined by `-`, as `misaligned-address`");
    }
    let dir = root.join("scenarios").join(slug);
    if dir.exists() {
        bail!("{} exists already", dir.display());
    }
    // Registration first, so that a manifest or catalogue in another shape
    // stops the command before it writes anything.
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).context("reading Cargo.toml")?;
    let marker =
        "scenario-invalid-device-ordinal = { path = \"scenarios/invalid-device-ordinal\" }\n";
    let Some(at) = text.find(marker) else {
        bail!("Cargo.toml: the root package's scenario dependencies are not where they were");
    };
    let entry = format!("scenario-{slug} = {{ path = \"scenarios/{slug}\" }}\n");
    let manifest_text = format!(
        "{}{entry}{}",
        &text[..at + marker.len()],
        &text[at + marker.len()..]
    );
    let catalog = root.join("src/lib.rs");
    let text = std::fs::read_to_string(&catalog).context("reading src/lib.rs")?;
    let marker = "        scenario_invalid_device_ordinal::scenario(),\n";
    let Some(at) = text.find(marker) else {
        bail!("src/lib.rs: the catalogue is not where it was");
    };
    let catalog_text = format!(
        "{}        scenario_{}::scenario(),\n{}",
        &text[..at + marker.len()],
        slug.replace('-', "_"),
        &text[at + marker.len()..]
    );
    for (path, content) in files(slug) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a file in the folder"))?;
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))?;
    }
    std::fs::write(&manifest, manifest_text)?;
    std::fs::write(&catalog, catalog_text)?;
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::project::root();
    create(&root, &args.slug)?;
    println!(
        "wrote scenarios/{}/ and registered it in Cargo.toml and src/lib.rs",
        args.slug
    );
    println!(
        "next: the failure in src/broken.rs, the fix in src/fixed.rs, claims with controls, pasted.toml;"
    );
    println!(
        "then `cargo run -- list -f {}` and `cargo xtask docs` (CONTRIBUTING.md walks through one case)",
        args.slug
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn case_names_are_lowercase_words() {
        assert!(super::valid("misaligned-address"));
        assert!(super::valid("x2-pair"));
        assert!(!super::valid("Misaligned"));
        assert!(!super::valid("bad--name"));
        assert!(!super::valid("-lead"));
        assert!(!super::valid("2fast"));
        assert!(!super::valid(""));
    }

    #[test]
    fn a_new_case_is_its_folder_and_two_lines() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("src")).unwrap();
        std::fs::write(
            r.join("Cargo.toml"),
            "[dependencies]\nscenario-invalid-device-ordinal = { path = \"scenarios/invalid-device-ordinal\" }\nx = 1\n",
        )
        .unwrap();
        std::fs::write(
            r.join("src/lib.rs"),
            "vec![\n        scenario_invalid_device_ordinal::scenario(),\n    ]\n",
        )
        .unwrap();
        super::create(r, "new-case").unwrap();
        let manifest = std::fs::read_to_string(r.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("scenario-new-case = { path = \"scenarios/new-case\" }"));
        let catalog = std::fs::read_to_string(r.join("src/lib.rs")).unwrap();
        assert!(catalog.contains("scenario_new_case::scenario(),"));
        for (file, _) in super::files("new-case") {
            assert!(r.join("scenarios/new-case").join(file).is_file(), "{file}");
        }
        // A second time: refused, nothing written twice.
        assert!(super::create(r, "new-case").is_err());
        let again = std::fs::read_to_string(r.join("Cargo.toml")).unwrap();
        assert_eq!(again.matches("scenario-new-case").count(), 1);
    }
}
