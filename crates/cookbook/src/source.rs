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
            "{}::{} declares no code (its `Program` names none)",
            scenario.slug,
            variant.name
        );
    };
    let file = format!("scenarios/{}/{}", scenario.slug, code.file);
    let text = read(root, &file)?;
    if let Some(anchor) = code.anchor
        && !has_anchor(&text, anchor)
    {
        bail!(
            "{}::{} declares anchor `{anchor}` in {file}, which has no `// ANCHOR: {anchor}`",
            scenario.slug,
            variant.name
        );
    }
    let (language, marker) = match variant.binding {
        Binding::CudaRuntimeCpp => ("cpp", "//"),
        _ => ("rust", "//!"),
    };
    Ok(Source {
        doc: leading_comment(&text, marker),
        file,
        anchor: code.anchor.map(str::to_owned),
        language,
    })
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
