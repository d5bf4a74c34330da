//! The command line that `casebook explain` and `casebook-explain` share.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::answer::{
    self, ASYNCHRONOUS_HINT, Answer, Match, OUT_OF_BOUNDS_NOTE, TIED_NOTE, UNNAMED_NOTE,
};
use crate::description::DESCRIPTION_NOTE;
use crate::index::Index;

/// Exit codes of `explain`, as `casebook_report::Exit` has them (a test
/// there holds them to it): the first answer decides.
pub mod exit {
    /// No case matches the text, reproduced or known.
    pub const NO_CASE_MATCHES: u8 = 15;
    /// The first answer is a known failure, which the casebook cannot
    /// provoke: no reproduced case is the likeliest cause, whether or not
    /// one matches below it.
    pub const KNOWN_FAILURE_FIRST: u8 = 16;
    /// The text is empty, or the index cannot be read.
    pub const BAD_INPUT: u8 = 2;
}

/// Finds the reproduced CUDA failure behind an error text.
///
/// Paste the whole error, a traceback or a log with nvidia-smi's output and
/// all: paths, device numbers and figures are not matched as words, and an
/// out-of-memory message's figures are read for what they say (a request
/// larger than the GPU, memory held by another process, a reserve in
/// pieces), shown among what matched. In a log with several errors the
/// first is taken as the likely cause. A first answer is the likeliest
/// reproduced cause, not a diagnosis: read its cause against what your
/// program does. Exit codes: 0 the first answer is a reproduced case; 16 it
/// is a known failure that cannot be provoked here; 15 no case matches (a
/// report to file is printed); 2 the text is empty, standard input cannot
/// be read, or the index cannot be read.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The error text. None, or `-`: the whole text from standard input.
    #[arg(value_name = "TEXT", allow_hyphen_values = true)]
    pub text: Vec<String>,
    /// Print JSON for tools: {"matches": [...], "errors": [...], ...}.
    #[arg(long)]
    pub json: bool,
    /// How many matches to print, best first; where several cases tie for
    /// first, all of them are printed, however many that is.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub top: u16,
    /// Read this index instead of the one built in
    /// (docs/src/explain/index.json).
    #[arg(long, value_name = "FILE")]
    pub index: Option<PathBuf>,
    /// Print the first three answers for every text of this held-out file
    /// and every indexed text, as the book's page does in its self-test.
    #[arg(long, value_name = "TEXTS_TOML", hide = true)]
    pub selftest: Option<PathBuf>,
}

/// Runs `explain`; errors are printed as one line.
pub fn run(args: &Args) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("explain: {e:#}");
            ExitCode::from(exit::BAD_INPUT)
        }
    }
}

fn run_inner(args: &Args) -> anyhow::Result<ExitCode> {
    let index = match &args.index {
        Some(path) => {
            let json = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("cannot read the index {}: {e}", path.display()))?;
            Index::parse(&json)
                .map_err(|e| anyhow::anyhow!("{} is not an explain index: {e}", path.display()))?
        }
        None => Index::embedded()?,
    };
    if let Some(path) = &args.selftest {
        let held = crate::heldout::parse(&std::fs::read_to_string(path)?)?;
        for line in crate::heldout::selftest_lines(&index, &held) {
            println!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let text = input(&args.text)?;
    anyhow::ensure!(
        !text.trim().is_empty(),
        "no text to explain: give it as an argument, or paste it on standard input"
    );
    let mut answer = answer::explain(&index, &text);
    let code = exit_code(&answer);
    // Every case of a tie is shown: the text cannot tell them apart.
    answer
        .matches
        .truncate(usize::from(args.top).max(answer.tied));
    if args.json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
    } else {
        print!("{}", render(&answer));
    }
    Ok(ExitCode::from(code))
}

/// What the answer amounts to for a script: its first answer decides, so
/// that a known failure first is never read as a reproduced case found.
pub fn exit_code(answer: &Answer) -> u8 {
    match answer.matches.first() {
        Some(m) if m.reproduced => 0,
        Some(_) => exit::KNOWN_FAILURE_FIRST,
        None => exit::NO_CASE_MATCHES,
    }
}

fn input(args: &[String]) -> anyhow::Result<String> {
    if !args.is_empty() && args.iter().any(|a| a != "-") {
        return Ok(args.join(" "));
    }
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprintln!("Paste the error (a whole traceback is fine), then press Ctrl-D.");
    }
    let mut bytes = Vec::new();
    stdin
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot read standard input: {e}"))?;
    // A log may hold a byte that is not UTF-8 (a Windows path, say): it is
    // read as U+FFFD, and the rest of the log as written.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The answer as a person reads it.
pub fn render(answer: &Answer) -> String {
    let mut out = String::new();
    if !answer.errors.is_empty() {
        out.push_str("Errors in the text, in order:\n");
        for (i, e) in answer.errors.iter().enumerate() {
            let role = if i == 0 {
                "  <- the first: the likely cause"
            } else {
                "  (after the first: likely its consequence)"
            };
            let role = if answer.errors.len() == 1 { "" } else { role };
            out.push_str(&format!("  {}. {}{role}\n", i + 1, shorten(e, 110)));
        }
        out.push('\n');
    }
    if answer.asynchronous {
        out.push_str(&format!("Note: {ASYNCHRONOUS_HINT}\n\n"));
    }
    if answer.tied > 1 {
        out.push_str(&TIED_NOTE.replace("{n}", &answer.tied.to_string()));
        out.push_str("\n\n");
    }
    if answer.out_of_bounds {
        out.push_str(&format!("Note: {OUT_OF_BOUNDS_NOTE}\n\n"));
    }
    if answer.by_description {
        out.push_str(&format!("Note: {DESCRIPTION_NOTE}\n\n"));
    }
    if !answer.unmatched_names.is_empty() {
        out.push_str(&UNNAMED_NOTE.replace("{names}", &answer.unmatched_names.join(", ")));
        out.push_str("\n\n");
    }
    for (i, m) in answer.matches.iter().enumerate() {
        out.push_str(&render_match(i + 1, m));
    }
    if let Some(r) = &answer.report {
        out.push_str(if answer.matches.is_empty() {
            "No case matches this text. To ask for one, file an issue with this:\n\n"
        } else {
            "No reproduced case matches this text: the failures above are known, and cannot be \
             provoked here (each says why). If none of their causes fits what your program did, \
             file an issue with this to ask for a case:\n\n"
        });
        out.push_str(r);
    }
    out
}

fn render_match(rank: usize, m: &Match) -> String {
    let mut out = format!("{rank}. {}: {}\n", m.scenario, m.title);
    let field = |name: &str, value: &str| format!("   {name:<11} {value}\n");
    out.push_str(&field("matched", &m.matched.join(" | ")));
    out.push_str(&field("cause", &m.cause));
    out.push_str(&field("fix", &m.fix));
    if m.reproduced {
        if m.reproduced_on.is_none() {
            out.push_str(&field(
                "reproduced",
                "not in the committed GPU run yet: a case added since; its page says what ran",
            ));
        }
        if let Some(on) = &m.reproduced_on {
            let pytorch = on
                .pytorch
                .as_deref()
                // `2.11.0+cu130, CUDA 13.0`: the CUDA is the run's own.
                .map(|p| format!(", PyTorch {}", p.split(',').next().unwrap_or(p)))
                .unwrap_or_default();
            out.push_str(&field(
                "reproduced",
                &format!(
                    "{}, driver {}, CUDA {}{pytorch}, commit {} ({})",
                    on.gpu,
                    on.driver,
                    on.cuda,
                    &on.commit[..on.commit.len().min(7)],
                    on.date
                ),
            ));
        }
    } else {
        out.push_str(&field(
            "reproduced",
            &format!(
                "no: {}",
                m.why_not_here
                    .as_deref()
                    .unwrap_or("it cannot be provoked on the casebook's GPU machines")
            ),
        ));
    }
    if !m.reports.is_empty() {
        let shown: Vec<&str> = m.reports.iter().take(3).map(String::as_str).collect();
        let more = match m.reports.len().saturating_sub(3) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        out.push_str(&field("reports", &format!("{}{more}", shown.join(", "))));
    }
    if let Some(page) = &m.page {
        out.push_str(&field("page", page));
    }
    if let Some(run) = &m.run {
        out.push_str(&field("run it", &run.cargo));
        out.push_str(&field(
            "",
            &format!("{}   (GPU box without Rust)", run.bundle),
        ));
    }
    out.push('\n');
    out
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}
