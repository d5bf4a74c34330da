//! Every committed report reads as the type it is, and writes back as the
//! same JSON: the field names and the shape are the format, and a change
//! of the types must not change them.

use std::path::{Path, PathBuf};

use casebook_report::Report;
use casebook_report::matrix::Matrix;
use casebook_report::reproduce::Reproduction;
use casebook_report::sanitizer::SanitizeReport;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn evidence() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/evidence");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Fields renamed since older files were written, which the types read
/// under their old names (`#[serde(alias)]`): (old, new).
const RENAMED: &[(&str, &str)] = &[
    ("serial_wall_seconds", "baseline_wall_seconds"),
    ("serial_seconds", "baseline_seconds"),
];

/// Where `again` (the file read and written back) loses or changes what
/// `original` holds: a field renamed, dropped or of another shape. A
/// field the file predates may be added, with its default; a figure may
/// be written with another last digit.
fn lost(original: &Value, again: &Value, at: &str) -> Option<String> {
    match (original, again) {
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(key, value)| {
            let at = format!("{at}/{key}");
            let renamed = RENAMED
                .iter()
                .find(|(old, _)| old == key)
                .map(|(_, new)| *new);
            match b.get(key).or_else(|| b.get(renamed?)) {
                None => Some(format!("{at}: dropped")),
                Some(other) => lost(value, other, &at),
            }
        }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| lost(x, y, &format!("{at}[{i}]"))),
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            ((a - b).abs() > 1e-9 * a.abs().max(1.0)).then(|| format!("{at}: {a} became {b}"))
        }
        (a, b) => (a != b).then(|| format!("{at}: {a} became {b}")),
    }
}

/// `text` read as `T` and written again: what that loses, if anything.
fn round_trip<T: DeserializeOwned + Serialize>(text: &str) -> Result<Option<String>, String> {
    let original: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let typed: T = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let again = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    Ok(lost(&original, &again, ""))
}

#[test]
fn every_committed_report_reads_and_writes_back_unchanged() {
    let files = evidence();
    assert!(files.len() > 10, "{files:?}");
    let mut problems = Vec::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        let same = match name.as_str() {
            n if n.starts_with("sanitize") => round_trip::<SanitizeReport>(&text),
            "matrix.json" => round_trip::<Matrix>(&text),
            n if n.starts_with("reproduce") => round_trip::<Reproduction>(&text),
            _ => round_trip::<Report>(&text),
        };
        match same {
            Ok(None) => {}
            Ok(Some(lost)) => problems.push(format!("{name}: written back, {lost}")),
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
