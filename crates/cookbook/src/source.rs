//! Where each variant's code is, as an mdBook include.

use std::path::Path;

use anyhow::{Context, bail};
use casebook_model::{Binding, Scenario, Variant};

/// A variant's code: the file (relative to the repository root), the anchor
/// in it if any, and the file's own opening doc comment.
pub struct Source {
    pub file: String,
    pub anchor: Option<String>,
    pub doc: String,
    pub language: &'static str,
}

/// Rust variant `v` lives in `src/<v>.rs`, or `src/<head>.rs` at anchor
/// `<tail>` for `<head>-<tail>`; a C++ variant in `kernels/host/<slug>.cu`
/// (or `<slug>_*.cu`) at the anchor named after it without `-cpp`, or the
/// whole `<slug>.cu`; a cust variant in `crates/cust/src/<slug>.rs` at the
/// anchor named after it without `-cust`.
pub fn locate(root: &Path, scenario: &Scenario, variant: &Variant) -> anyhow::Result<Source> {
    let under = |s: &str| s.replace('-', "_");
    if variant.binding == Binding::CudaRuntimeCpp {
        // `<slug>.cu`, or another `<slug>_*.cu` that has the anchor.
        let anchor = under(variant.name.trim_end_matches("-cpp"));
        let main = format!("kernels/host/{}.cu", under(scenario.slug));
        let mut files = vec![main.clone()];
        let prefix = format!("{}_", under(scenario.slug));
        let mut others: Vec<String> = std::fs::read_dir(root.join("kernels/host"))
            .with_context(|| "reading kernels/host")?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with(&prefix) && n.ends_with(".cu"))
            .map(|n| format!("kernels/host/{n}"))
            .collect();
        others.sort();
        files.extend(others);
        for file in &files {
            let text = read(root, file)?;
            if has_anchor(&text, &anchor) {
                return Ok(Source {
                    doc: leading_comment(&text, "//"),
                    file: file.clone(),
                    anchor: Some(anchor),
                    language: "cpp",
                });
            }
        }
        let text = read(root, &main)?;
        return Ok(Source {
            doc: leading_comment(&text, "//"),
            file: main,
            anchor: None,
            language: "cpp",
        });
    }
    if variant.binding == Binding::Cust {
        // The cust binary: `crates/cust/src/<slug>.rs`, at the anchor named
        // after the variant without `-cust`.
        let file = format!("crates/cust/src/{}.rs", under(scenario.slug));
        let text = read(root, &file)?;
        let anchor = under(variant.name.trim_end_matches("-cust"));
        if !has_anchor(&text, &anchor) {
            bail!(
                "no anchor `{anchor}` in {file} for {}::{}",
                scenario.slug,
                variant.name
            );
        }
        return Ok(Source {
            doc: leading_comment(&text, "//!"),
            file,
            anchor: Some(anchor),
            language: "rust",
        });
    }
    let dir = format!("scenarios/{}/src", scenario.slug);
    let whole = format!("{dir}/{}.rs", under(variant.name));
    if root.join(&whole).is_file() {
        let text = read(root, &whole)?;
        return Ok(Source {
            doc: leading_comment(&text, "//!"),
            file: whole,
            anchor: None,
            language: "rust",
        });
    }
    if let Some((head, tail)) = variant.name.split_once('-') {
        let file = format!("{dir}/{}.rs", under(head));
        let text = read(root, &file)?;
        let anchor = under(tail);
        if has_anchor(&text, &anchor) {
            return Ok(Source {
                doc: leading_comment(&text, "//!"),
                file,
                anchor: Some(anchor),
                language: "rust",
            });
        }
    }
    bail!(
        "no source for {}::{}: expected {whole}, or a file and anchor named after it",
        scenario.slug,
        variant.name
    )
}

fn read(root: &Path, file: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))
}

fn has_anchor(text: &str, anchor: &str) -> bool {
    text.lines()
        .any(|l| l.trim() == format!("// ANCHOR: {anchor}"))
}

/// The comment lines a file opens with, joined into paragraphs.
pub fn leading_comment(text: &str, marker: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(marker) else {
            break;
        };
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        if rest.is_empty() {
            out.push_str("\n\n");
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(rest);
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::leading_comment;

    #[test]
    fn leading_comments_become_paragraphs() {
        let text = "//! First line\n//! goes on.\n//!\n//! Second.\n\nuse x;\n//! not this";
        assert_eq!(
            leading_comment(text, "//!"),
            "First line goes on.\n\nSecond."
        );
    }
}
