//! `cargo xtask new-scenario <slug>`: a case's folder that builds, as
//! clippy's `cargo dev new_lint` writes a lint: the manifest (with the
//! case's place in the catalogue, and the build script every case shares),
//! the vocabulary, a broken and a fixed variant that are skeletons, an empty
//! `pasted.toml`; then `cargo xtask docs`, which registers the folder (the
//! catalogue, the root manifest) and writes its README. Nothing outside the folder is edited by hand.
//!
//! The skeleton cannot pass for a case: its variants end on an error that
//! says they are not written yet, and its title is
//! `casebook_model::NOT_WRITTEN`, which the catalogue's checks name as a
//! case not written. What remains is the case itself: the failure, the fix,
//! the claims with their controls, the users' texts.

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

/// The place after the last case in the catalogue: one more than the
/// largest `order` a case's `Cargo.toml` declares.
fn next_order(root: &Path) -> anyhow::Result<u32> {
    let mut last = 0;
    for entry in std::fs::read_dir(root.join("scenarios")).context("reading scenarios/")? {
        let Ok(text) = std::fs::read_to_string(entry?.path().join("Cargo.toml")) else {
            continue;
        };
        for line in text.lines() {
            if let Some(n) = line.strip_prefix("order = ") {
                last = last.max(n.trim().parse::<u32>().unwrap_or(0));
            }
        }
    }
    Ok(last + 1)
}

/// A skeleton variant: it ends on an error, so that no run takes it for a
/// case.
fn skeleton(role: &str) -> String {
    format!(
        "//! The {role} program: NOT WRITTEN YET.\n\
         \n\
         // The recorded driver calls (`device::context`, `rec.step`, ...).\n\
         use casebook_driver::prelude::*;\n\
         \n\
         // ANCHOR: run\n\
         pub fn run(_rec: &mut Recorder) -> anyhow::Result<()> {{\n    \
         anyhow::bail!(\"not written yet: the {role} variant of cargo xtask new-scenario's skeleton\")\n\
         }}\n\
         // ANCHOR_END: run\n"
    )
}

/// The files of a new case, relative to its folder.
fn files(slug: &str, order: u32) -> Vec<(&'static str, String)> {
    vec![
        (
            "Cargo.toml",
            format!(
                "[package]\nname = \"scenario-{slug}\"\nversion = \"0.1.0\"\ndescription = \"cuda-casebook: {slug} (say what fails, in a line)\"\nedition.workspace = true\nrust-version.workspace = true\nlicense.workspace = true\npublish.workspace = true\nbuild = \"../../kernels/build/scenario.rs\"\n\n[package.metadata.casebook]\n# Where the case stands in the catalogue: `casebook list`, the book.\norder = {order}\n\n[dependencies]\ncasebook-model.workspace = true\ncasebook-driver.workspace = true\ncudarc.workspace = true\nanyhow.workspace = true\n\n[build-dependencies]\ncasebook-build.workspace = true\n"
            ),
        ),
        (
            "names.toml",
            "[checks]\nWORKED = \"the work ran\"\n".to_owned(),
        ),
        (
            "pasted.toml",
            "# What users paste for this failure, copied from public reports. Each text is\n# what the user wrote, verbatim: the error lines (not the whole traceback),\n# or, where the user described the failure in words, the thread's title and\n# the sentences (or the part of one) that describe the symptom.\n# `cause`: who in the thread traced it to this case's cause, and how.\n".to_owned(),
        ),
        (
            "src/lib.rs",
            format!(
                "//! `{slug}`: NOT WRITTEN YET. What fails, how the broken variant provokes\n//! it, and what the fixed one changes.\n\nuse casebook_driver::prelude::*;\n\nmod broken;\nmod fixed;\n\ncasebook_model::case_modules!();\n\ncasebook_model::scenario!(Scenario {{\n    // The error text users see (what the case reproduces).\n    title: casebook_model::NOT_WRITTEN,\n    cause: \"The real cause, in two sentences.\",\n    fix: \"The fix, in a sentence.\",\n    symptoms: &[],\n    requires: Requirement::GPU,\n    // None yet: once written, the claims are `const CLAIMS`, and this line goes.\n    claims: &[],\n    variants: variants![cudarc_pair!(Symptom::check_failed(WORKED))],\n}});\n"
            ),
        ),
        ("src/broken.rs", skeleton("broken")),
        ("src/fixed.rs", skeleton("fixed")),
    ]
}

/// Writes the case's folder under `root`; registration is `cargo xtask docs`'s.
pub fn create(root: &Path, slug: &str) -> anyhow::Result<()> {
    if !valid(slug) {
        bail!("`{slug}` is no case name: lowercase words joined by `-`, as `misaligned-address`");
    }
    let dir = root.join("scenarios").join(slug);
    if dir.exists() {
        bail!("{} exists already", dir.display());
    }
    let order = next_order(root)?;
    for (path, content) in files(slug, order) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a file in the folder"))?;
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::project::root();
    create(&root, &args.slug)?;
    println!("wrote scenarios/{}/", args.slug);
    // The first pass registers the folder (the catalogue and the manifests
    // are what `casebook` is built from); the second, built with the case,
    // writes its README and its page.
    for _ in 0..2 {
        let code = crate::docs::run(crate::docs::Args::default())?;
        if code != ExitCode::SUCCESS {
            bail!("cargo xtask docs failed; the folder is written, run it again once it builds");
        }
    }
    println!(
        "next: the failure in src/broken.rs, the fix in src/fixed.rs, the title, claims with controls, \
         pasted.toml; then `cargo run -- list -f {}` (CONTRIBUTING.md walks through one case)",
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
    fn a_new_case_is_its_folder_only() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("scenarios/old-case")).unwrap();
        std::fs::write(
            r.join("scenarios/old-case/Cargo.toml"),
            "[package.metadata.casebook]\norder = 41\n",
        )
        .unwrap();
        super::create(r, "new-case").unwrap();
        for (file, _) in super::files("new-case", 42) {
            assert!(r.join("scenarios/new-case").join(file).is_file(), "{file}");
        }
        let manifest = std::fs::read_to_string(r.join("scenarios/new-case/Cargo.toml")).unwrap();
        assert!(manifest.contains("\norder = 42\n"), "{manifest}");
        // Nothing beside the folder.
        let mut top: Vec<_> = std::fs::read_dir(r)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        top.sort();
        assert_eq!(top, ["scenarios"]);
        // A second time: refused.
        assert!(super::create(r, "new-case").is_err());
        assert!(super::create(r, "Bad").is_err());
    }

    #[test]
    fn a_skeleton_variant_cannot_pass() {
        let text = super::skeleton("broken");
        assert!(text.contains("anyhow::bail!(\"not written yet: the broken variant"));
        assert!(!text.contains("Ok(())"));
    }
}
