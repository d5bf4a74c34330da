//! How the pages say the same things: a scenario's results and symptom,
//! an error's name and its text, a claim's source, verdict and control, a
//! figure with its unit, code as code. Every page that says one of these
//! says it through here, so a claim reads the same on its scenario's page
//! and in the ledger, and no page borrows from another.

use std::collections::BTreeSet;

use casebook_model::{Expect, Scenario, Source, Symptom, Unit};
use casebook_report::run::{Report, ResultEntry};

/// The results of `slug`'s trials in the run's report.
pub fn results<'a>(
    report: Option<&'a Report>,
    slug: &'a str,
) -> impl Iterator<Item = &'a ResultEntry> {
    report
        .into_iter()
        .flat_map(|r| r.results.iter())
        .filter(move |r| r.scenario == slug)
}

/// The variants of a scenario that needs a pair of GPUs that the run's
/// report does not hold: no machine with two GPUs has run them yet.
pub fn awaiting_pair_run<'a>(scenario: &'a Scenario, report: Option<&Report>) -> Vec<&'a str> {
    if !scenario.needs_pair() {
        return Vec::new();
    }
    scenario
        .variants
        .iter()
        .filter(|v| !results(report, scenario.slug).any(|r| r.variant == v.name))
        .map(|v| v.name)
        .collect()
}

/// What a page says of the variants that await their two-GPU run.
pub fn awaiting_pair_run_line(variants: &[&str]) -> String {
    let names: Vec<String> = variants.iter().map(|v| code_span(v)).collect();
    format!(
        "**Awaiting its two-GPU run:** {} ({} of this case's variants). Each needs two GPUs of \
         one host (a pair trial); no run on such a machine has been committed yet, so it has \
         no result in the committed run, no snapshot and no verdict. Elsewhere it is skipped with \
         the reason.",
        names.join(", "),
        variants.len()
    )
}

/// The error names a user of this scenario's broken code sees: those its
/// failing variants declare (with the errors that follow), and every error
/// its broken variants' calls returned in the last run, provoked ones
/// included (a user's program gets those too).
pub fn symptom_names(scenario: &Scenario, report: Option<&Report>) -> Vec<String> {
    let mut names = BTreeSet::new();
    for v in &scenario.variants {
        if let Expect::Fails(symptom) = &v.expect {
            for s in std::iter::once(symptom).chain(&v.then_shows) {
                if let Symptom::CudaError(name) = s {
                    names.insert(name.clone());
                }
            }
        }
    }
    for r in results(report, scenario.slug) {
        if r.role == casebook_model::Role::Broken {
            for step in r.outcome.steps.iter().filter(|s| s.is_error()) {
                names.insert(step.result.clone());
            }
        }
    }
    names.into_iter().collect()
}

/// The page's symptom line for `scenario`: the errors its broken code
/// shows, or, where it shows none, what its user sees instead, from the
/// symptoms it is filed under: a hang, slowness, out of memory in a later
/// program, memory that shrinks, or wrong results.
pub fn scenario_symptom_line(scenario: &Scenario, report: Option<&Report>) -> String {
    let names = symptom_names(scenario, report);
    if !names.is_empty() {
        return symptom_line(&names);
    }
    let filed = |p: fn(&str) -> bool| scenario.symptoms.iter().any(|s| p(s));
    if filed(|s| s.starts_with(HANG)) {
        "no error is reported: the program hangs"
    } else if filed(|s| s.starts_with("slow")) {
        "no error is reported: the program is slow"
    } else if filed(|s| s.contains("out of memory")) {
        "out of memory in a later allocation (the run measures the memory held; none of its own \
         calls fails)"
    } else if filed(|s| s.contains("memory that keeps shrinking")) {
        "no error is reported: free memory keeps shrinking"
    } else {
        "no error is reported: the results are wrong"
    }
    .to_owned()
}

/// The symptom of the index under which a scenario whose program hangs is
/// listed.
pub const HANG: &str = "a hang";

pub fn symptom_line(names: &[String]) -> String {
    if names.is_empty() {
        return "no error is reported".to_owned();
    }
    names
        .iter()
        .map(|n| match error_text(n) {
            Some(text) => format!("{} (\"{text}\")", code_span(n)),
            None => code_span(n),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `text` as inline code: what a tool printed or a name in code, shown as
/// it is (no `__global__` read as bold).
pub fn code_span(text: &str) -> String {
    let fence = if text.contains('`') { "``" } else { "`" };
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A raw figure in words: bytes in GiB or MiB, seconds in s, ms or µs,
/// ratios as percentages, factors as `21.1×`.
pub fn figure(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes if value.abs() >= (1u64 << 30) as f64 => {
            format!("{:.2} GiB", value / (1u64 << 30) as f64)
        }
        Unit::Bytes if value.abs() >= (1u64 << 20) as f64 => {
            format!("{:.1} MiB", value / (1u64 << 20) as f64)
        }
        Unit::Bytes => format!("{value} B"),
        Unit::Count => format!("{value}"),
        Unit::Seconds if value.abs() >= 1.0 || value == 0.0 => format!("{value:.3} s"),
        Unit::Seconds if value.abs() >= 1e-3 => format!("{:.2} ms", value * 1e3),
        Unit::Seconds => format!("{:.1} µs", value * 1e6),
        Unit::Ratio => format!("{:.1}%", value * 100.0),
        Unit::Factor => format!("{value:.1}×"),
    }
}

/// The verdict the run computed for a declared claim, in words.
pub fn verdict_of(
    report: Option<&Report>,
    s: &Scenario,
    c: &casebook_model::Claim,
) -> &'static str {
    results(report, s.slug)
        .filter(|r| r.variant == c.judged_by)
        .flat_map(|r| r.claims.iter())
        .find(|r| r.id == c.id)
        .map_or("not run yet", |r| r.verdict.word())
}

/// What the claim's judge reads in the recorded outcome of `control`, a
/// variant of its scenario: the other answer, if the experiment could have
/// come out otherwise.
pub fn control_verdict_of(
    report: Option<&Report>,
    s: &Scenario,
    c: &casebook_model::Claim,
    control: &str,
) -> Option<&'static str> {
    results(report, s.slug)
        .find(|r| r.variant == control)
        .map(|r| c.verdict(&r.outcome).word())
}

/// A claim's control as a table's cell: the run, and what the claim's judge
/// reads in it; for a claim decided in parts, each part's.
pub fn control_cell(report: Option<&Report>, s: &Scenario, c: &casebook_model::Claim) -> String {
    let one = |control: casebook_model::Control| match control {
        casebook_model::Control::Run(v) => format!(
            "`{v}`: {}",
            control_verdict_of(report, s, c, v).unwrap_or("not run yet")
        ),
        casebook_model::Control::Impossible(why) => {
            format!("none can exist: {}", why.replace('|', "\\|"))
        }
        casebook_model::Control::Parts(_) | casebook_model::Control::Pending => {
            "none yet".to_owned()
        }
    };
    match c.control {
        casebook_model::Control::Parts(parts) => parts
            .iter()
            .map(|p| format!("{}: {}", p.part.replace('|', "\\|"), one(p.control)))
            .collect::<Vec<_>>()
            .join("; "),
        control => one(control),
    }
}

/// A claim's row in a table of claims: its verdict, its words with its id
/// (which names the part of the sentence it decides, where two claims
/// quote the same sentence) and how far the run can decide it, its source,
/// `decided_by`, and its control.
pub fn claim_row(
    report: Option<&Report>,
    s: &Scenario,
    c: &casebook_model::Claim,
    decided_by: &str,
) -> String {
    format!(
        "| **{}** | \"{}\"<br><small>`{}`</small>{} | {} | {decided_by} | {} |",
        verdict_of(report, s, c),
        c.quote.replace('|', "\\|"),
        c.id,
        reach_note(c),
        source_cell(&c.source),
        control_cell(report, s, c)
    )
}

/// Under a claim's verdict in a table: how far the run can decide it, where
/// it can decide it only in part.
pub fn reach_note(c: &casebook_model::Claim) -> String {
    c.reach
        .cap()
        .map(|why| {
            format!(
                "<br><small>At best partly: {}</small>",
                why.replace('|', "\\|")
            )
        })
        .unwrap_or_default()
}

/// The seed articles, by their file name in `shared/seeds/`, each with the
/// title its front matter gives (`title: "..."`), copied verbatim. The
/// seeds are not in the repository, so a reader knows an article by this
/// title, never by its file name; a test compares the table with the seed
/// files wherever they are at hand.
const SEED_TITLES: &[(&str, &str)] = &[
    (
        "000_1633914ffce0e075.txt",
        "Why does a CUDA error occur when calling a model a second time?",
    ),
    (
        "001_eb72388bf55c7443.txt",
        "Why does my CNN model fail on the second run, encountering cuDNN errors?",
    ),
    (
        "002_245404227877bbf6.txt",
        "Why is there a CUDA out-of-memory error if no processes are running?",
    ),
    (
        "003_a513a38b5daed103.txt",
        "Why is CUDA experiencing out-of-memory errors with a batch size of 1, even after clearing the cache?",
    ),
    (
        "004_dd8d91b458147886.txt",
        "Why am I getting a CUDA out-of-memory error despite available GPU memory?",
    ),
];

/// A seed article by its title, in a table cell: the file name only where
/// the table has no title for it.
pub fn seed_cell(file: &str) -> String {
    match SEED_TITLES.iter().find(|(f, _)| *f == file) {
        Some((_, title)) => format!("*{}*", title.replace('|', "\\|")),
        None => format!("`{file}`"),
    }
}

/// A claim's source in a table cell: the seed article's title, or a link to
/// the documentation's section.
pub fn source_cell(source: &Source) -> String {
    match source {
        Source::Seed(file) => seed_cell(file),
        Source::Nvidia(p) | Source::Pytorch(p) => {
            format!("[{}, {}]({})", p.document, p.section, p.url)
        }
    }
}

/// The description CUDA gives an error name, as a user sees it printed.
pub fn error_text(name: &str) -> Option<&'static str> {
    Some(match name {
        "CUDA_ERROR_OUT_OF_MEMORY" | "cudaErrorMemoryAllocation" => "out of memory",
        "CUDA_ERROR_ILLEGAL_ADDRESS" | "cudaErrorIllegalAddress" => {
            "an illegal memory access was encountered"
        }
        "cudaErrorDevicesUnavailable" | "CUDA_ERROR_DEVICE_UNAVAILABLE" => {
            "CUDA-capable device(s) is/are busy or unavailable"
        }
        "CUBLAS_STATUS_ALLOC_FAILED" => "resource allocation failed",
        "CUDA_ERROR_NO_BINARY_FOR_GPU" | "cudaErrorNoKernelImageForDevice" => {
            "no kernel image is available for execution on the device"
        }
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" | "cudaErrorUnsupportedPtxVersion" => {
            "the provided PTX was compiled with an unsupported toolchain."
        }
        "CUDA_ERROR_ASSERT" | "cudaErrorAssert" => "device-side assert triggered",
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" | "cudaErrorLaunchOutOfResources" => {
            "too many resources requested for launch"
        }
        "cudaErrorInvalidConfiguration" => "invalid configuration argument",
        "CUDA_ERROR_INVALID_VALUE" | "cudaErrorInvalidValue" => "invalid argument",
        "CUDA_ERROR_NOT_INITIALIZED" | "cudaErrorInitializationError" => "initialization error",
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" | "cudaErrorStreamCaptureUnsupported" => {
            "operation not permitted when stream is capturing"
        }
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED" | "cudaErrorStreamCaptureInvalidated" => {
            "operation failed due to a previous error during capture"
        }
        "CUDA_ERROR_STREAM_CAPTURE_ISOLATION" | "cudaErrorStreamCaptureIsolation" => {
            "dependency created on uncaptured work in another stream"
        }
        "CUDA_ERROR_INVALID_CONTEXT" | "cudaErrorDeviceUninitialized" => "invalid device context",
        _ => return None,
    })
}

/// What a user reads for an error, whatever wraps it: CUDA's description
/// of an error name, or what follows "CUDA error: " in the text PyTorch
/// raises; any other name is its own.
pub fn error_key(name: &str) -> &str {
    match error_text(name) {
        Some(text) => text,
        None => name
            .split_once("CUDA error: ")
            .map_or(name, |(_, text)| text.trim()),
    }
}

#[cfg(test)]
mod seed_tests {
    use super::{SEED_TITLES, seed_cell};

    /// Where the seed articles lie beside a checkout, if they do.
    fn seeds_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds")
    }

    #[test]
    fn each_seed_is_named_by_the_title_it_gives_itself() {
        let Ok(entries) = std::fs::read_dir(seeds_dir()) else {
            return; // no seeds beside this checkout: nothing to compare
        };
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if !file.ends_with(".txt") {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let title = text
                .lines()
                .find_map(|l| l.strip_prefix("title:"))
                .map(|t| t.trim().trim_matches('"').to_owned())
                .unwrap_or_else(|| panic!("{file} gives no title"));
            let listed = SEED_TITLES.iter().find(|(f, _)| *f == file);
            assert_eq!(listed.map(|(_, t)| *t), Some(title.as_str()), "{file}");
            files.push(file);
        }
        assert_eq!(files.len(), SEED_TITLES.len(), "a listed seed is gone");
    }

    #[test]
    fn a_seed_reads_as_its_title_and_an_unknown_one_as_its_file() {
        assert_eq!(
            seed_cell("002_245404227877bbf6.txt"),
            "*Why is there a CUDA out-of-memory error if no processes are running?*"
        );
        assert_eq!(seed_cell("009_unknown.txt"), "`009_unknown.txt`");
    }
}

#[cfg(test)]
mod figure_tests {
    use super::*;

    #[test]
    fn each_unit_reads_at_its_own_scale() {
        assert_eq!(figure(3.0 * (1u64 << 30) as f64, Unit::Bytes), "3.00 GiB");
        assert_eq!(figure(2.5, Unit::Seconds), "2.500 s");
        assert_eq!(figure(0.0504, Unit::Seconds), "50.40 ms");
        assert_eq!(figure(0.000_022_6, Unit::Seconds), "22.6 µs");
        assert_eq!(figure(0.25, Unit::Ratio), "25.0%");
        assert_eq!(figure(18.49, Unit::Factor), "18.5×");
    }
}

#[cfg(test)]
pub(crate) mod symptom_tests {
    use super::*;
    use casebook_model::Requirement;

    /// A scenario filed under `symptoms`, with nothing else.
    pub(crate) fn scenario(symptoms: &'static [&'static str]) -> Scenario {
        Scenario {
            slug: "s",
            title: "t",
            cause: "",
            fix: "",
            symptoms,
            requires: Requirement::GPU,
            reports: &[],
            claims: &[],
            variants: vec![],
        }
    }

    #[test]
    fn a_case_without_an_error_is_said_to_show_what_its_user_sees() {
        let line = |symptoms| scenario_symptom_line(&scenario(symptoms), None);
        assert_eq!(
            line(&["a hang, no error"]),
            "no error is reported: the program hangs"
        );
        assert_eq!(
            line(&["wrong results, no error"]),
            "no error is reported: the results are wrong"
        );
        // open-streams, malloc-in-loop and orphaned-process: slowness, and
        // out of memory in the next program, never "wrong results".
        assert_eq!(
            line(&["slow calls, no error"]),
            "no error is reported: the program is slow"
        );
        assert_eq!(line(&["slow, GPU idle"]), line(&["slow calls, no error"]));
        assert!(
            line(&["out of memory", "out of memory though memory is free"])
                .starts_with("out of memory in a later allocation")
        );
        assert_eq!(
            line(&["memory that keeps shrinking"]),
            "no error is reported: free memory keeps shrinking"
        );
    }

    #[test]
    fn a_pytorch_text_and_a_cuda_name_are_one_error() {
        let assert = error_key("CUDA_ERROR_ASSERT");
        assert_eq!(
            error_key("torch.AcceleratorError: CUDA error: device-side assert triggered"),
            assert
        );
        assert_eq!(error_key("cudaErrorAssert"), assert);
        assert_ne!(error_key("CUDA_ERROR_ILLEGAL_ADDRESS"), assert);
    }

    fn nothing(_: &mut casebook_model::Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    #[test]
    fn the_errors_that_follow_a_declared_symptom_are_listed_too() {
        let mut s = scenario(&["an error"]);
        let program = casebook_model::Program::cudarc(
            nothing,
            casebook_model::Code {
                file: "src/x.rs",
                anchor: None,
            },
        );
        s.variants = vec![
            casebook_model::Variant::contrast(
                "c",
                Expect::Fails(Symptom::cuda_error("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED")),
                program,
            )
            .then_shows(Symptom::cuda_error("CUDA_ERROR_STREAM_CAPTURE_ISOLATION")),
        ];
        assert_eq!(
            symptom_names(&s, None),
            [
                "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"
            ]
        );
        assert!(
            scenario_symptom_line(&s, None)
                .contains("(\"dependency created on uncaptured work in another stream\")")
        );
    }
}
