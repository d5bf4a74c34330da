//! `casebook matrix`: run-all reports of several machines, or the shards of
//! one run, merged into the fleet matrix (`matrix.json`, `matrix.md`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use casebook_report::{Exit, matrix};

use crate::commands;
use crate::reporter::report;

pub fn run(reports: &[PathBuf], out: &Path) -> ExitCode {
    let merged = match matrix::merge(reports) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return Exit::CannotMerge.into();
        }
    };
    let written = commands::write("the matrix", out, || {
        report::write_json(out, "matrix.json", &merged)?;
        std::fs::write(out.join("matrix.md"), merged.markdown())
    });
    if let Err(code) = written {
        return code;
    }
    for c in &merged.columns {
        println!("{}: {}", c.machine, c.files.join(", "));
    }
    let differing = merged.rows.iter().filter(|r| !r.differs.is_empty()).count();
    println!(
        "{} trials on {} machine(s) from commit {}; {} differ between them",
        merged.rows.len(),
        merged.columns.len(),
        merged.commit.get(..7).unwrap_or(&merged.commit),
        differing
    );
    println!("matrix: {}", out.join("matrix.json").display());
    ExitCode::SUCCESS
}
