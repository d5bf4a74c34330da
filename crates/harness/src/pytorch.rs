//! The PyTorch binding's side of the runner: the interpreter, whether it
//! can run PyTorch on the GPU, and the command that starts a Python variant.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use casebook_model::{Runner, Scenario, Variant};

use casebook_runtime::isolation::{self, ChildCommand};

/// Names the interpreter; `python3` when unset.
pub const PYTHON_ENV: &str = "CASEBOOK_PYTHON";
/// The scenario's vocabulary, for the Python recorder.
pub const NAMES_ENV: &str = "CASEBOOK_NAMES";
/// Where the `casebook` Python module is, relative to the root.
pub const MODULE_DIR: &str = "crates/model/python";

/// How long importing torch and starting CUDA may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// The interpreter the PyTorch variants run under.
pub fn interpreter() -> PathBuf {
    std::env::var_os(PYTHON_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// The command that runs a Python variant: `python3 -m casebook
/// <file> <function>`, with the module on `PYTHONPATH` and the scenario's
/// names.toml named.
pub fn command(
    root: &Path,
    scenario: &Scenario,
    variant: &Variant,
    file: &str,
    function: &str,
) -> ChildCommand {
    let folder = root.join("scenarios").join(scenario.slug);
    let module = root.join(MODULE_DIR);
    let path = match std::env::var_os("PYTHONPATH") {
        Some(old) if !old.is_empty() => {
            std::env::join_paths(std::iter::once(module).chain(std::env::split_paths(&old)))
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        }
        _ => module.to_string_lossy().into_owned(),
    };
    ChildCommand {
        program: interpreter(),
        args: vec![
            "-m".into(),
            "casebook".into(),
            folder.join(file).to_string_lossy().into_owned(),
            function.into(),
        ],
        target: scenario.trial_name(variant),
        timeout: variant.timeout,
        env: vec![
            ("PYTHONPATH".into(), path),
            (
                NAMES_ENV.into(),
                folder.join("names.toml").to_string_lossy().into_owned(),
            ),
            // No __pycache__ in the tree, and every line out at once.
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ("PYTHONUNBUFFERED".into(), "1".into()),
        ],
    }
}

/// What the interpreter says about PyTorch: `Ok("2.11.0+cu130, CUDA 13.0")`,
/// or why the PyTorch variants cannot run, in one line. Asked once per run,
/// in a process of its own, so the runner never starts CUDA.
pub fn available() -> &'static Result<String, String> {
    static PROBE: OnceLock<Result<String, String>> = OnceLock::new();
    PROBE.get_or_init(|| probe(&interpreter()))
}

/// What the probe prints its answer after: torch may warn on stderr, and
/// the child's output comes back as stdout and stderr together.
const PROBE_MARK: &str = "casebook-probe: ";

const PROBE_SCRIPT: &str = "\
import sys
def say(text, code):
    print('casebook-probe: ' + text); sys.exit(code)
try:
    import torch
except Exception as e:
    say(f'{type(e).__name__}: {e}', 2)
if not torch.cuda.is_available():
    say(f'torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is False)', 3)
say(f'{torch.__version__}, CUDA {torch.version.cuda}', 0)
";

/// Runs the probe under `python`, in a process group of its own with a
/// time limit, as a variant's child runs.
pub fn probe(python: &Path) -> Result<String, String> {
    let shown = python.display();
    let cmd = ChildCommand {
        program: python.to_path_buf(),
        args: vec!["-c".into(), PROBE_SCRIPT.into()],
        target: "pytorch probe".into(),
        timeout: PROBE_TIMEOUT,
        env: Vec::new(),
    };
    let run = isolation::run(&cmd).map_err(|e| format!("cannot start {shown}: {e}"))?;
    if run.timed_out {
        return Err(format!(
            "{shown} did not import torch within {} s",
            PROBE_TIMEOUT.as_secs()
        ));
    }
    let said = run
        .output_tail
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(PROBE_MARK))
        .map(str::to_owned);
    let succeeded = run.status.is_some_and(|s| s.success());
    match (succeeded, said) {
        (true, Some(said)) => Ok(said),
        (false, Some(said)) => Err(format!("{shown} cannot run PyTorch on a GPU: {said}")),
        (_, None) => Err(format!(
            "{shown} exited with {} when asked to import torch",
            run.status.map_or("no status".to_owned(), |s| s.to_string())
        )),
    }
}

/// Why `variant` cannot run here, if it cannot: it runs PyTorch, and the
/// interpreter cannot import torch with CUDA.
pub fn skip_reason(variant: &Variant) -> Option<String> {
    if !variant.needs_torch() {
        return None;
    }
    available()
        .as_ref()
        .err()
        .map(|why| format!("needs PyTorch with CUDA: {why}"))
}

/// Every Python variant's file has its function, and every `names.X` the
/// scenario's Python files use is declared in its names.toml: a misspelt
/// name fails here, on the CPU, not as a panic on the GPU.
pub fn check_python_variants(catalog: &[Scenario], root: &Path) -> Result<(), String> {
    let mut problems = Vec::new();
    for scenario in catalog {
        let folder = root.join("scenarios").join(scenario.slug);
        // Each Python file once, with the functions its variants run.
        let mut files: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for variant in &scenario.variants {
            if let Runner::Python { file, function } = variant.runner {
                files.entry(file).or_default().push(function);
            }
        }
        if files.is_empty() {
            continue;
        }
        let declared = match declared_names(&folder.join("names.toml")) {
            Ok(d) => d,
            Err(e) => {
                problems.push(format!("{}: {e}", scenario.slug));
                continue;
            }
        };
        for (file, functions) in files {
            let shown = format!("scenarios/{}/{file}", scenario.slug);
            let text = match std::fs::read_to_string(folder.join(file)) {
                Ok(text) => text,
                Err(e) => {
                    problems.push(format!("{shown}: {e}"));
                    continue;
                }
            };
            for function in functions {
                if !text.contains(&format!("\ndef {function}(rec)")) {
                    problems.push(format!("{shown} has no `def {function}(rec)`"));
                }
            }
            for used in names_used(&text) {
                if !declared.contains(used) {
                    problems.push(format!(
                        "{shown} uses names.{used}, which its names.toml does not declare"
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The identifiers a names.toml declares, in all its tables.
fn declared_names(path: &Path) -> Result<std::collections::BTreeSet<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{}: {}", path.display(), e.message()))?;
    Ok(table
        .values()
        .filter_map(|v| v.as_table())
        .flat_map(|t| t.keys().cloned())
        .collect())
}

/// Every `names.IDENT` in Python source.
fn names_used(text: &str) -> std::collections::BTreeSet<&str> {
    text.match_indices("names.")
        .filter(|(at, _)| {
            // Not part of a longer name (`my_names.X`).
            text[..*at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_')
        })
        .map(|(at, m)| {
            let rest = &text[at + m.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|ident| ident.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use casebook_model::{Expect, Program, Requirement, Role, Symptom, Termination, Unit};

    const NAMES: &str = r#"
[checks]
SUM_RIGHT = "the sum is right"
[facts]
SEEN = "what was seen"
[measures]
TOOK = { key = "took", unit = "seconds" }
[series]
CURVE = { key = "curve", per = "call", unit = "bytes" }
"#;

    /// No torch here: plain Python, recorded as a PyTorch variant is.
    const VARIANTS: &str = r#"
from casebook import names

def clean(rec):
    total = rec.step("sum([1, 2])", lambda: sum([1, 2]))
    rec.check(names.SUM_RIGHT, total == 3)
    rec.fact(names.SEEN, ["a", 1, True])
    rec.measure(names.TOOK, 0.5)
    rec.iteration("call")
    rec.point(names.CURVE, 1, 4096)
    rec.iteration(None)
    failed = rec.attempt("1 / 0", lambda: 1 / 0, tolerated=True)
    rec.fact(names.SEEN, failed.error)

def stops_on_a_failed_call(rec):
    rec.step("int('x')", lambda: int("x"))
    rec.fact(names.SEEN, "never")

def misspelt(rec):
    rec.fact(names.SEEM, 1)

def global_names(rec):
    import casebook
    rec.fact(names.SEEN, casebook.REDUCED.name)
"#;

    /// A workspace root holding the scenario `python-protocol`: its
    /// names.toml and the variants above.
    fn protocol_root() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("scenarios/python-protocol");
        std::fs::create_dir_all(folder.join("python")).unwrap();
        std::fs::write(folder.join("names.toml"), NAMES).unwrap();
        std::fs::write(folder.join("python/variants.py"), VARIANTS).unwrap();
        root
    }

    /// That scenario, with `function` as its one variant.
    fn protocol_scenario(function: &'static str) -> Scenario {
        Scenario {
            slug: "python-protocol",
            title: "",
            cause: "",
            fix: "",
            symptoms: &[],
            requires: Requirement::GPU,
            reports: &[],
            claims: &[],
            variants: vec![Variant::new(
                function,
                Role::Fixed,
                Expect::Clean,
                Program::pytorch("python/variants.py", function),
            )],
        }
    }

    /// Runs `function` of the variants above through the real command, the
    /// isolation and the event file, as the harness runs a PyTorch variant.
    fn run(function: &'static str) -> casebook_model::Outcome {
        let root = protocol_root();
        let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/python");
        std::fs::create_dir_all(root.path().join("crates/model")).unwrap();
        std::os::unix::fs::symlink(module, root.path().join(MODULE_DIR)).unwrap();
        let scenario = protocol_scenario(function);
        let Runner::Python { file, function } = scenario.variants[0].runner else {
            unreachable!()
        };
        let cmd = command(
            root.path(),
            &scenario,
            &scenario.variants[0],
            file,
            function,
        );
        isolation::outcome(&isolation::run(&cmd).unwrap())
    }

    #[test]
    fn the_python_recorder_writes_the_rust_event_shape() {
        let o = run("clean");
        assert_eq!(o.termination, Termination::Completed, "{}", o.stderr_tail);
        assert_eq!(o.steps[0].call, "sum([1, 2])");
        assert!(!o.steps[0].is_error(), "{:?}", o.steps[0]);
        assert_eq!(o.steps[1].result, "ZeroDivisionError: division by zero");
        assert!(o.steps[1].tolerated);
        assert_eq!(o.check_named("the sum is right"), Some(true));
        assert_eq!(
            o.fact_named("what was seen"),
            Some(&serde_json::json!("ZeroDivisionError: division by zero"))
        );
        assert_eq!(o.measures["took"].unit, Unit::Seconds);
        assert_eq!(o.series["curve"], vec![[1.0, 4096.0]]);
        assert_eq!(o.axes["curve"].x_label, "call");
        assert_eq!(o.axes["curve"].y_unit, Unit::Bytes);
        assert_eq!(o.iterations.len(), 1);
        assert!(o.symptoms().is_empty(), "{:?}", o.symptoms());
    }

    #[test]
    fn a_failed_step_ends_the_variant_with_its_error() {
        let o = run("stops_on_a_failed_call");
        assert_eq!(
            o.termination,
            Termination::ReturnedError,
            "{}",
            o.stderr_tail
        );
        assert_eq!(
            o.symptoms(),
            [Symptom::cuda_error(
                "ValueError: invalid literal for int() with base …"
            )]
        );
        assert_eq!(o.fact_named("what was seen"), None);
    }

    #[test]
    fn a_name_not_in_names_toml_is_a_panic() {
        let o = run("misspelt");
        assert_eq!(o.termination, Termination::Panicked);
        assert!(
            o.error
                .as_deref()
                .unwrap_or_default()
                .contains("SEEM is not declared"),
            "{:?}",
            o.error
        );
    }

    #[test]
    fn the_python_global_names_are_the_rust_ones() {
        let o = run("global_names");
        assert_eq!(
            o.fact_named("what was seen"),
            Some(&serde_json::json!(casebook_model::REDUCED.0))
        );
    }

    #[test]
    fn the_catalogue_check_names_a_missing_function_and_an_undeclared_name() {
        let root = protocol_root();
        let folder = root.path().join("scenarios/python-protocol");
        let scenario = protocol_scenario;
        let problems = check_python_variants(&[scenario("absent")], root.path()).unwrap_err();
        assert!(problems.contains("has no `def absent(rec)`"), "{problems}");
        // VARIANTS' `misspelt` uses names.SEEM, which NAMES lacks.
        assert!(problems.contains("uses names.SEEM"), "{problems}");
        assert_eq!(problems.lines().count(), 2, "{problems}");
        std::fs::write(
            folder.join("python/variants.py"),
            VARIANTS.replace("names.SEEM", "names.SEEN"),
        )
        .unwrap();
        assert_eq!(
            check_python_variants(&[scenario("clean")], root.path()),
            Ok(())
        );
    }

    #[test]
    fn python_names_are_read_from_the_source() {
        let text = "rec.check(names.OK, x)\nrec.fact(names.SEEN_2, my_names.NOT)\nnames.lower\n";
        let used: Vec<_> = names_used(text).into_iter().collect();
        assert_eq!(used, ["OK", "SEEN_2"]);
    }

    #[test]
    fn a_missing_interpreter_is_a_reason_not_a_panic() {
        let why = probe(Path::new("/nonexistent/python3")).unwrap_err();
        assert!(
            why.starts_with("cannot start /nonexistent/python3"),
            "{why}"
        );
    }

    /// An interpreter whose `torch` is a stand-in: `cuda_available` says
    /// what `torch.cuda.is_available()` returns, and it warns on stderr, as
    /// torch can.
    fn fake_torch(dir: &Path, cuda_available: bool) -> std::path::PathBuf {
        let module = dir.join("torch");
        std::fs::create_dir_all(module.join("cuda")).unwrap();
        std::fs::write(
            module.join("__init__.py"),
            "import sys\nfrom torch import cuda, version\n__version__ = '9.9.9+fake'\n\
             print('UserWarning: a warning on stderr', file=sys.stderr)\n",
        )
        .unwrap();
        std::fs::write(module.join("version.py"), "cuda = '13.0'\n").unwrap();
        std::fs::write(
            module.join("cuda/__init__.py"),
            format!(
                "def is_available():\n    return {}\n",
                if cuda_available { "True" } else { "False" }
            ),
        )
        .unwrap();
        let wrapper = dir.join("python-with-fake-torch");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nPYTHONPATH={} exec python3 \"$@\"\n",
                dir.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        wrapper
    }

    #[test]
    fn an_interpreter_with_torch_and_cuda_names_its_versions() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            probe(&fake_torch(dir.path(), true)),
            Ok("9.9.9+fake, CUDA 13.0".to_owned())
        );
    }

    #[test]
    fn torch_without_cuda_is_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let why = probe(&fake_torch(dir.path(), false)).unwrap_err();
        assert!(
            why.contains("torch 9.9.9+fake sees no CUDA device"),
            "{why}"
        );
    }

    #[test]
    fn an_interpreter_without_torch_says_which_import_failed() {
        // `python3 -S` skips site-packages, so torch cannot be found even where
        // it is installed; a wrapper script makes that one interpreter.
        let dir = tempfile::tempdir().unwrap();
        let wrapper = dir.path().join("python-without-torch");
        std::fs::write(&wrapper, "#!/bin/sh\nexec python3 -S -I \"$@\"\n").unwrap();
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let why = probe(&wrapper).unwrap_err();
        assert!(
            why.contains("ModuleNotFoundError: No module named 'torch'"),
            "{why}"
        );
    }
}
