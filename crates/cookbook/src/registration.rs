//! What registers the cases, written from their folders: a case is its
//! folder, `scenarios/<slug>/`, and every list of the cases outside it (the
//! catalogue, the root package's dependencies, `casebook-cust`'s table and
//! manifest, the fleet's key figures) is made here, written by
//! `cargo xtask docs` and checked fresh with the pages. Cargo needs the
//! manifests' lines before anything builds, so they are written into the
//! manifests, between two marker lines, rather than computed at build time.
//!
//! What a folder says for itself, in its `Cargo.toml`:
//!
//! ```toml
//! [package.metadata.casebook]
//! # Where the case stands in the catalogue: `casebook list`, the book.
//! order = 7
//! # The measures the fleet matrix shows for every machine (optional).
//! key-figures = [
//!     { variant = "broken", measure = "bytes_per_context", what = "device memory per context" },
//! ]
//! ```
//!
//! and a `cust.rs` where it has cust variants.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

/// Where the cases are.
pub const SCENARIOS_DIR: &str = "scenarios";

/// The catalogue, as a module of the root package.
pub const CATALOG: &str = "src/cases.rs";
/// `casebook-cust`'s table of the cases with cust variants.
pub const CUST_TABLE: &str = "crates/cust/src/cases.rs";
/// The fleet matrix's key figures.
pub const KEY_FIGURES: &str = "crates/report/src/key_figures.rs";

/// The manifests with a written block of the cases' dependencies, and the
/// path from each to the repository root.
const MANIFESTS: &[(&str, &str, Which)] = &[
    ("Cargo.toml", "", Which::All),
    ("crates/cust/Cargo.toml", "../../", Which::Cust),
];

/// The lines around a manifest's written block.
const BEGIN: &str = "# The cases, one line a folder of scenarios/: written by `cargo xtask docs`.";
const END: &str = "# (the end of the cases)";

#[derive(Clone, Copy)]
enum Which {
    All,
    Cust,
}

/// One case's folder, as registration reads it.
#[derive(Debug)]
pub struct Case {
    pub slug: String,
    /// Where it stands in the catalogue.
    pub order: u32,
    /// Whether it has cust variants (`cust.rs`), compiled by `casebook-cust`.
    pub cust: bool,
    pub key_figures: Vec<KeyFigure>,
}

/// A measure the fleet matrix shows for every machine.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyFigure {
    pub variant: String,
    pub measure: String,
    /// What it is, as the fleet page's row says it.
    pub what: String,
}

#[derive(Deserialize)]
struct Manifest {
    package: Package,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
struct Metadata {
    casebook: Option<Declared>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct Declared {
    order: u32,
    #[serde(default)]
    key_figures: Vec<KeyFigure>,
}

/// Every folder under `scenarios/`, in catalogue order.
pub fn cases(root: &Path) -> anyhow::Result<Vec<Case>> {
    let dir = root.join(SCENARIOS_DIR);
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let manifest = path.join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        let slug = path
            .file_name()
            .and_then(|n| n.to_str())
            .with_context(|| format!("{}: a folder name that is not UTF-8", path.display()))?
            .to_owned();
        let text = std::fs::read_to_string(&manifest)?;
        let m: Manifest =
            toml::from_str(&text).with_context(|| format!("reading {}", manifest.display()))?;
        if m.package.name != format!("scenario-{slug}") {
            bail!(
                "{}: the package is `{}`, not `scenario-{slug}`",
                manifest.display(),
                m.package.name
            );
        }
        let Some(declared) = m.package.metadata.and_then(|m| m.casebook) else {
            bail!(
                "{}: no [package.metadata.casebook] with the case's `order` in the catalogue",
                manifest.display()
            );
        };
        cases.push(Case {
            cust: path.join("cust.rs").is_file(),
            slug,
            order: declared.order,
            key_figures: declared.key_figures,
        });
    }
    cases.sort_by_key(|c| c.order);
    for pair in cases.windows(2) {
        if pair[0].order == pair[1].order {
            bail!(
                "{} and {} both declare order {} in the catalogue",
                pair[0].slug,
                pair[1].slug,
                pair[0].order
            );
        }
    }
    Ok(cases)
}

/// The files registration writes, by path relative to `root`: the whole of
/// the generated modules, and each manifest with its block written anew.
pub fn files(root: &Path) -> anyhow::Result<BTreeMap<PathBuf, String>> {
    let cases = cases(root)?;
    let mut files = BTreeMap::new();
    files.insert(PathBuf::from(CATALOG), catalog(&cases));
    files.insert(PathBuf::from(CUST_TABLE), cust_table(&cases));
    files.insert(PathBuf::from(KEY_FIGURES), key_figures(&cases));
    for (manifest, up, which) in MANIFESTS {
        let path = root.join(manifest);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        files.insert(
            PathBuf::from(manifest),
            with_block(&text, &dependencies(&cases, up, *which))
                .with_context(|| format!("{manifest}: no lines `{BEGIN}` and `{END}`"))?,
        );
    }
    Ok(files)
}

/// The crate name a case's code is reached by: `scenario_missing_free`.
fn krate(slug: &str) -> String {
    format!("scenario_{}", slug.replace('-', "_"))
}

fn catalog(cases: &[Case]) -> String {
    let mut s = String::from(
        "//! Every case, in the order a reader meets them. Written by `cargo xtask docs`\n\
         //! from the folders under `scenarios/` (each one's `Cargo.toml` gives its\n\
         //! `order`): edit a folder, never this file.\n\
         \n\
         use casebook_model::Scenario;\n\
         \n\
         #[rustfmt::skip]\n\
         pub fn all() -> Vec<Scenario> {\n    vec![\n",
    );
    for c in cases {
        let _ = writeln!(s, "        {}::scenario(),", krate(&c.slug));
    }
    s.push_str("    ]\n}\n");
    s
}

fn cust_table(cases: &[Case]) -> String {
    let mut s = String::from(
        "//! The cases with cust variants (a `cust.rs` in their folder), compiled\n\
         //! here, where cust is linked, and nowhere else. Written by\n\
         //! `cargo xtask docs`: edit the folders, never this file.\n\
         \n\
         use casebook_model::VariantFn;\n\
         \n",
    );
    let mut modules: Vec<&Case> = cases.iter().filter(|c| c.cust).collect();
    // rustfmt keeps module declarations sorted.
    modules.sort_by_key(|c| c.slug.replace('-', "_"));
    for c in &modules {
        let _ = writeln!(
            s,
            "#[path = \"../../../{SCENARIOS_DIR}/{}/cust.rs\"]\nmod {};",
            c.slug,
            c.slug.replace('-', "_")
        );
    }
    s.push_str(
        "\n/// Every case with cust variants, in catalogue order, and its table.\n\
         #[rustfmt::skip]\n\
         pub const SCENARIOS: &[(&str, &[(&str, VariantFn)])] = &[\n",
    );
    for c in cases.iter().filter(|c| c.cust) {
        let _ = writeln!(
            s,
            "    (\"{}\", {}::VARIANTS),",
            c.slug,
            c.slug.replace('-', "_")
        );
    }
    s.push_str("];\n");
    s
}

fn key_figures(cases: &[Case]) -> String {
    let mut s = String::from(
        "//! The figures each cell of the fleet matrix carries. Written by\n\
         //! `cargo xtask docs` from the cases' `Cargo.toml`s (`key-figures` in\n\
         //! `[package.metadata.casebook]`), by case name: edit those, never this file.\n\
         \n\
         /// (scenario, variant, measure, what it is).\n\
         #[rustfmt::skip]\n\
         pub const KEY_FIGURES: &[(&str, &str, &str, &str)] = &[\n",
    );
    let mut by_slug: Vec<&Case> = cases.iter().collect();
    by_slug.sort_by(|a, b| a.slug.cmp(&b.slug));
    for c in by_slug {
        for f in &c.key_figures {
            let _ = writeln!(
                s,
                "    ({:?}, {:?}, {:?}, {:?}),",
                c.slug, f.variant, f.measure, f.what
            );
        }
    }
    s.push_str("];\n");
    s
}

/// A manifest's dependencies on the cases, one line each, by case name.
fn dependencies(cases: &[Case], up: &str, which: Which) -> String {
    let mut by_slug: Vec<&Case> = cases
        .iter()
        .filter(|c| match which {
            Which::All => true,
            Which::Cust => c.cust,
        })
        .collect();
    by_slug.sort_by(|a, b| a.slug.cmp(&b.slug));
    let mut s = String::new();
    for c in by_slug {
        let _ = writeln!(
            s,
            "scenario-{} = {{ path = \"{up}{SCENARIOS_DIR}/{}\" }}",
            c.slug, c.slug
        );
    }
    s
}

/// `text` with what stands between its lines `BEGIN` and `END` replaced by
/// `block`; `None` where the two lines are not there, in that order.
fn with_block(text: &str, block: &str) -> Option<String> {
    let begin = text.find(&format!("{BEGIN}\n"))? + BEGIN.len() + 1;
    let end = begin + text[begin..].find(&format!("{END}\n"))?;
    Some(format!("{}{block}{}", &text[..begin], &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_replaced_and_only_it() {
        let text = format!("[dependencies]\na = 1\n{BEGIN}\nold = 1\n{END}\nb = 2\n");
        assert_eq!(
            with_block(&text, "new = 1\n").unwrap(),
            format!("[dependencies]\na = 1\n{BEGIN}\nnew = 1\n{END}\nb = 2\n")
        );
        assert!(with_block("[dependencies]\n", "x").is_none());
    }

    /// A case added as a folder, in a tree of its own: it reaches every list,
    /// in the order its manifest gives; a folder without its place, or with
    /// another's, is refused.
    #[test]
    fn a_new_folder_is_registered_everywhere() {
        let root =
            std::env::temp_dir().join(format!("casebook-registration-{}", std::process::id()));
        let case = |slug: &str, metadata: &str| {
            let dir = root.join(SCENARIOS_DIR).join(slug);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("Cargo.toml"),
                format!("[package]\nname = \"scenario-{slug}\"\n\n{metadata}"),
            )
            .unwrap();
        };
        case(
            "b-case",
            "[package.metadata.casebook]\norder = 1\nkey-figures = [\n    \
             { variant = \"broken\", measure = \"bytes\", what = \"what it costs\" },\n]\n",
        );
        std::fs::write(root.join("scenarios/b-case/cust.rs"), "").unwrap();
        case("a-case", "[package.metadata.casebook]\norder = 2\n");
        std::fs::create_dir_all(root.join("crates/cust")).unwrap();
        let manifest = format!("[dependencies]\n{BEGIN}\n{END}\nanyhow = 1\n");
        std::fs::write(root.join("Cargo.toml"), &manifest).unwrap();
        std::fs::write(root.join("crates/cust/Cargo.toml"), &manifest).unwrap();

        let files = files(&root).unwrap();
        let file = |p: &str| files[&PathBuf::from(p)].clone();
        let catalog = file(CATALOG);
        let (b, a) = (
            catalog.find("scenario_b_case::").unwrap(),
            catalog.find("scenario_a_case::").unwrap(),
        );
        assert!(b < a, "{catalog}");
        assert_eq!(
            file("Cargo.toml"),
            format!(
                "[dependencies]\n{BEGIN}\n\
                 scenario-a-case = {{ path = \"scenarios/a-case\" }}\n\
                 scenario-b-case = {{ path = \"scenarios/b-case\" }}\n{END}\nanyhow = 1\n"
            )
        );
        assert_eq!(
            file("crates/cust/Cargo.toml"),
            format!(
                "[dependencies]\n{BEGIN}\n\
                 scenario-b-case = {{ path = \"../../scenarios/b-case\" }}\n{END}\nanyhow = 1\n"
            )
        );
        let cust = file(CUST_TABLE);
        assert!(cust.contains("#[path = \"../../../scenarios/b-case/cust.rs\"]\nmod b_case;"));
        assert!(cust.contains("(\"b-case\", b_case::VARIANTS),") && !cust.contains("a_case"));
        assert!(file(KEY_FIGURES).contains(r#"("b-case", "broken", "bytes", "what it costs"),"#));

        case("c-case", "[package.metadata.casebook]\norder = 2\n");
        let clash = super::files(&root).unwrap_err().to_string();
        assert!(clash.contains("both declare order 2"), "{clash}");
        case("c-case", "");
        let missing = super::files(&root).unwrap_err().to_string();
        assert!(
            missing.contains("no [package.metadata.casebook]"),
            "{missing}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_folders_give_the_order_and_the_lists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cases = cases(&root).unwrap();
        assert!(cases.windows(2).all(|w| w[0].order < w[1].order));
        let files = files(&root).unwrap();
        let catalog = &files[&PathBuf::from(CATALOG)];
        for c in &cases {
            assert!(catalog.contains(&format!("{}::scenario(),", krate(&c.slug))));
        }
    }
}
