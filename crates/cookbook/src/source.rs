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

/// The code a variant declares ([`Variant::code`]): its file in the
/// scenario's folder and the anchor in it. A declaration that names a file
/// or an anchor that is not there is an error.
pub fn locate(root: &Path, scenario: &Scenario, variant: &Variant) -> anyhow::Result<Source> {
    let Some(code) = variant.code else {
        bail!(
            "{} declares no code (its `Program` names none)",
            scenario.trial_id(variant)
        );
    };
    let file = format!("scenarios/{}/{}", scenario.slug, code.file);
    let text = read(root, &file)?;
    let (language, marker, comment) = match variant.binding {
        Binding::CudaRuntimeCpp => ("cpp", "//", "//"),
        Binding::Pytorch => ("python", "", "#"),
        _ => ("rust", "//!", "//"),
    };
    if let Some(anchor) = code.anchor
        && !has_anchor(&text, comment, anchor)
    {
        bail!(
            "{} declares anchor `{anchor}` in {file}, which has no `{comment} ANCHOR: {anchor}`",
            scenario.trial_id(variant)
        );
    }
    let doc = match variant.binding {
        Binding::Pytorch => docstring(&text),
        _ => leading_comment(&text, marker),
    };
    Ok(Source {
        doc,
        file,
        anchor: code.anchor.map(str::to_owned),
        language,
    })
}

fn read(root: &Path, file: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))
}

fn has_anchor(text: &str, comment: &str, anchor: &str) -> bool {
    text.lines()
        .any(|l| l.trim() == format!("{comment} ANCHOR: {anchor}"))
}

/// A Python file's module docstring, its paragraphs joined into lines.
pub fn docstring(text: &str) -> String {
    let Some(rest) = text.trim_start().strip_prefix("\"\"\"") else {
        return String::new();
    };
    let body = rest.split("\"\"\"").next().unwrap_or_default();
    body.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
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
    use super::{docstring, leading_comment};

    #[test]
    fn a_module_docstring_becomes_paragraphs() {
        let text = "\"\"\"First line\ngoes on.\n\nSecond.\n\"\"\"\n\nimport torch\n";
        assert_eq!(docstring(text), "First line goes on.\n\nSecond.");
        assert_eq!(docstring("import torch\n"), "");
    }

    #[test]
    fn leading_comments_become_paragraphs() {
        let text = "//! First line\n//! goes on.\n//!\n//! Second.\n\nuse x;\n//! not this";
        assert_eq!(
            leading_comment(text, "//!"),
            "First line goes on.\n\nSecond."
        );
    }
}
