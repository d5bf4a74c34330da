//! Workers: a variant that needs more than one process (to keep a fault
//! away from its own context, or to contend with another process for the
//! GPU) re-executes its own trial as a worker with a role. The worker runs
//! the same variant function, which asks [`role`] and acts on it.
//!
//! A worker is a new program image (fork and exec at once), so it may be
//! started after the parent has initialised CUDA: it never runs in a forked
//! copy of the parent's CUDA state. Each worker records to its own event
//! file, so its errors are its own outcome, not the variant's.

use std::time::Duration;

use casebook_driver::RecordSteps;
use casebook_model::Outcome;

use crate::isolation::{self, ChildCommand};
use crate::protocol::{EVENTS_ENV, TARGET_ENV};

/// Set in a worker to the role it was given.
pub const ROLE_ENV: &str = "CASEBOOK_WORKER";

/// The role this process was started with, if it is a worker.
pub fn role() -> Option<String> {
    std::env::var(ROLE_ENV).ok()
}

/// Runs the current trial again as a worker with `role`, and returns its
/// outcome: what it recorded and how it ended.
pub fn run(role: &str, timeout: Duration, env: &[(&str, &str)]) -> std::io::Result<Outcome> {
    let target = std::env::var(TARGET_ENV).map_err(|_| {
        std::io::Error::other(format!(
            "a worker can only be started from a trial ({TARGET_ENV} is not set)"
        ))
    })?;
    let mut cmd = ChildCommand::this_binary(target, timeout)?;
    cmd.env.push((ROLE_ENV.to_owned(), role.to_owned()));
    cmd.env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let child = isolation::run(&cmd)?;
    Ok(isolation::outcome(&child))
}

/// Starts a worker for each of `roles` at once, with the same `timeout`
/// and `env`, and waits for all of them: their outcomes, in the order of
/// `roles`. Processes that must meet (a barrier, a handover) need to run
/// at the same time.
pub fn run_together(
    roles: &[String],
    timeout: Duration,
    env: &[(&str, &str)],
) -> std::io::Result<Vec<Outcome>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = roles
            .iter()
            .map(|role| s.spawn(move || run(role, timeout, env)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker's thread panicked"))
            .collect()
    })
}

/// A command that starts the current trial again as a worker with `role`,
/// which records nothing. Unlike [`run`], the caller owns the process: it
/// spawns it, waits for it or kills it, and chooses its process group (by
/// default it stays in the caller's).
pub fn command(role: &str) -> std::io::Result<std::process::Command> {
    let target = std::env::var(TARGET_ENV).map_err(|_| {
        std::io::Error::other(format!(
            "a worker can only be started from a trial ({TARGET_ENV} is not set)"
        ))
    })?;
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.env(TARGET_ENV, target)
        .env(EVENTS_ENV, "/dev/null")
        .env(ROLE_ENV, role)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    Ok(cmd)
}

/// [`run`], with the worker started under another program: `wrapper` is
/// that program and its arguments (a debugger, a sanitizer), given the
/// trial's binary after them. What the wrapper printed is the outcome's
/// `stderr_tail` (stdout and stderr, the end of them).
pub fn run_under(
    wrapper: &[&str],
    role: &str,
    timeout: Duration,
    env: &[(&str, &str)],
) -> std::io::Result<Outcome> {
    let target = std::env::var(TARGET_ENV).map_err(|_| {
        std::io::Error::other(format!(
            "a worker can only be started from a trial ({TARGET_ENV} is not set)"
        ))
    })?;
    let (program, args) = wrapper
        .split_first()
        .ok_or_else(|| std::io::Error::other("no program to start the worker under"))?;
    let mut cmd = ChildCommand::this_binary(target, timeout)?;
    let binary = std::mem::replace(&mut cmd.program, (*program).into());
    cmd.args = args.iter().map(|a| (*a).to_owned()).collect();
    cmd.args.push(binary.to_string_lossy().into_owned());
    cmd.env.push((ROLE_ENV.to_owned(), role.to_owned()));
    cmd.env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let child = isolation::run(&cmd)?;
    Ok(isolation::outcome(&child))
}

/// compute-sanitizer's memcheck with its full leak check: a wrapper for
/// [`report_under`] whose report lists every allocation left unfreed, with
/// the host backtrace of the call that made it.
pub const LEAK_CHECK: &[&str] = &[
    "compute-sanitizer",
    "--tool",
    "memcheck",
    "--leak-check",
    "full",
];

/// [`run_under`] a tool that writes its report to a file of its own
/// (`--log-file`, as compute-sanitizer and Nsight Compute take it), so that
/// all of the report is read, whichever stream the tool prefers: the
/// worker's outcome, and the report (the file's text, then what the tool
/// printed).
pub fn report_under(
    tool: &[&str],
    role: &str,
    timeout: Duration,
) -> std::io::Result<(Outcome, String)> {
    let (program, args) = tool
        .split_first()
        .ok_or_else(|| std::io::Error::other("no tool to start the worker under"))?;
    let log = std::env::temp_dir().join(format!("casebook-tool-{}.log", std::process::id()));
    let log_arg = log.to_string_lossy().into_owned();
    let wrapper: Vec<&str> = [&[*program, "--log-file", &log_arg], args].concat();
    let run = run_under(&wrapper, role, timeout, &[])?;
    let report = std::fs::read_to_string(&log).unwrap_or_default() + &run.stderr_tail;
    let _ = std::fs::remove_file(&log);
    Ok((run, report))
}

/// [`run`], and what the worker recorded copied into `rec` under its role
/// ([`replay`]): a worker whose record is part of the variant's own.
pub fn run_replayed(
    rec: &mut casebook_model::Recorder,
    role: &str,
    timeout: Duration,
    env: &[(&str, &str)],
) -> std::io::Result<Outcome> {
    let outcome = run(role, timeout, env)?;
    replay(rec, role, &outcome);
    Ok(outcome)
}

/// Copies what a worker recorded into the variant's own record, as one
/// iteration labelled `label`: its calls (as provoked, so they are no
/// symptoms of the variant), its checks and facts prefixed with the label,
/// and how it ended.
pub fn replay(rec: &mut casebook_model::Recorder, label: &str, worker: &Outcome) {
    use casebook_model::{Event, Step};
    rec.iteration(label, |rec| {
        for step in &worker.steps {
            rec.emit(&Event::Step(Step {
                tolerated: true,
                ..step.clone()
            }));
        }
    });
    for check in &worker.checks {
        rec.fact_named(&format!("{label}: {}", check.name), check.ok);
    }
    for (key, value) in &worker.facts {
        rec.fact_named(&format!("{label}: {key}"), value);
    }
    // Raw figures stay raw: into the report, not the snapshot.
    for (key, m) in &worker.measures {
        rec.measure_named(&format!("{label}: {key}"), m.value, m.unit);
    }
    rec.fact_named(&format!("{label}: ended"), worker.termination.to_string());
}

/// The role of a worker that only asks for memory: see [`neighbour_allocates`].
pub const NEIGHBOUR: &str = "neighbour";
const NEED_ENV: &str = "CASEBOOK_NEIGHBOUR_BYTES";
/// The fact a neighbour records.
const SERVED: casebook_model::FactName = casebook_model::FactName("its allocation succeeded");
/// The raw figure a neighbour records: its free memory once its context is
/// made (cuMemGetInfo), in bytes.
pub const FREE_AFTER_ITS_CONTEXT: &str = "free_after_its_context";

/// Starts another process that asks for `bytes` of device memory with
/// `cuMemAlloc` and frees them; records what it did as "another process"
/// and returns whether it was served. The variant must call [`neighbour`]
/// first thing when it runs as a worker with the [`NEIGHBOUR`] role.
pub fn neighbour_allocates(
    rec: &mut casebook_model::Recorder,
    bytes: usize,
) -> anyhow::Result<bool> {
    let need = bytes.to_string();
    let other = run(NEIGHBOUR, Duration::from_secs(60), &[(NEED_ENV, &need)])?;
    replay(rec, "another process", &other);
    // Refused only when it asked and was told no: a process that never
    // reached its allocation (its context refused, a crash, a timeout) is
    // no answer.
    match other.flag(SERVED) {
        Some(served) if other.termination == casebook_model::Termination::Completed => Ok(served),
        _ => anyhow::bail!(
            "the other process did not reach its allocation (it {})",
            other.termination
        ),
    }
}

/// The neighbour's side: `None` unless this process is a neighbour, else
/// its run.
pub fn neighbour(rec: &mut casebook_model::Recorder) -> Option<anyhow::Result<()>> {
    (role().as_deref() == Some(NEIGHBOUR)).then(|| {
        let bytes: usize = std::env::var(NEED_ENV)?.parse()?;
        let _ctx = casebook_driver::device::context(rec)?;
        // What its context left it (a raw figure, unrecorded as a call):
        // against the free memory the parent saw, what the context took.
        if let Ok((free, _)) = cudarc::driver::result::mem_get_info() {
            rec.measure_named(
                FREE_AFTER_ITS_CONTEXT,
                free as f64,
                casebook_model::Unit::Bytes,
            );
        }
        let buf = rec.tolerate("cuMemAlloc (what it needs)", unsafe {
            cudarc::driver::result::malloc_sync(bytes)
        });
        rec.fact(SERVED, buf.is_ok());
        if let Ok(ptr) = buf {
            rec.step("cuMemFree", unsafe {
                cudarc::driver::result::free_sync(ptr)
            })?;
        }
        Ok(())
    })
}
