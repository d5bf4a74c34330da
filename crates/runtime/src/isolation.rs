//! The parent side: starts a child in its own process group, enforces the
//! timeout, and rebuilds the outcome from the child's event file and exit.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use casebook_model::{Event, Outcome, Termination};

use crate::protocol::{EVENTS_ENV, MULTICAST_OFF, RUN_ENV, TARGET_ENV, UNKNOWN_PARENT_EXIT};
use crate::reaper;

/// Set when the run is interrupted: every child still running is killed
/// with its process group, and no new one starts.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Interrupts the run (from a Ctrl-C or SIGTERM handler).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether the run has been interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// How much of the child's stdout and stderr is kept.
const TAIL_BYTES: usize = 8 * 1024;

/// What came back from one child process.
#[derive(Debug)]
pub struct ChildRun {
    /// The event lines the child wrote, in order.
    pub lines: Vec<String>,
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    /// Killed because the run was interrupted.
    pub interrupted: bool,
    /// The end of what it printed, stdout and stderr together.
    pub output_tail: String,
    pub seconds: f64,
}

/// What to start: the harness binary itself, or another program.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub target: String,
    pub timeout: Duration,
    /// More environment for the child (a worker role, CUDA_LAUNCH_BLOCKING, …).
    pub env: Vec<(String, String)>,
}

impl ChildCommand {
    /// This very binary, re-executed to run `target`.
    pub fn this_binary(target: String, timeout: Duration) -> std::io::Result<Self> {
        Ok(ChildCommand {
            program: std::env::current_exe()?,
            args: Vec::new(),
            target,
            timeout,
            env: Vec::new(),
        })
    }
}

/// Runs the child to its end or its timeout. Only failing to start it at
/// all is an error; everything the child does is an observation.
pub fn run(cmd: &ChildCommand) -> std::io::Result<ChildRun> {
    let events = tempfile::Builder::new()
        .prefix("casebook-events-")
        .suffix(".jsonl")
        .tempfile()?;
    let started = Instant::now();
    let harness = std::process::id();
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .env(TARGET_ENV, &cmd.target)
        .env(EVENTS_ENV, events.path())
        .env(RUN_ENV, harness.to_string())
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        // Last, so that neither the command nor the caller's environment
        // turns NVLink multicast back on.
        .envs(MULTICAST_OFF)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout kills whatever it started too.
        .process_group(0);
    // SAFETY: the closure makes two system calls and exits; nothing in it
    // allocates or takes a lock.
    unsafe {
        command.pre_exec(move || {
            // The child dies with the thread that started it, however the
            // harness ends (a SIGKILL included)...
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            // ...unless the harness is already gone.
            if libc::getppid() as u32 != harness {
                libc::_exit(UNKNOWN_PARENT_EXIT);
            }
            Ok(())
        });
    }
    let mut child = command.spawn()?;
    // What the child starts in turn dies with its group: the reaper kills
    // it if the harness ends first.
    reaper::watch(child.id());
    let readers = [
        child.stdout.take().map(|s| thread::spawn(move || tail(s))),
        child.stderr.take().map(|s| thread::spawn(move || tail(s))),
    ];
    let (status, timed_out, interrupted) = wait_or_kill(&mut child, cmd.timeout)?;
    // Whatever the child left behind in its group goes with it.
    kill_group(child.id());
    reaper::forget(child.id());
    let seconds = started.elapsed().as_secs_f64();
    let output_tail = readers
        .into_iter()
        .flatten()
        .filter_map(|h| h.join().ok())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    let text = std::fs::read(events.path())?;
    let lines = String::from_utf8_lossy(&text)
        .lines()
        .map(str::to_owned)
        .collect();
    Ok(ChildRun {
        lines,
        status,
        timed_out,
        interrupted,
        output_tail,
        seconds,
    })
}

/// Waits for the child; kills its group at the timeout or when the run is
/// interrupted. Returns its status, whether it timed out, and whether it
/// was interrupted.
fn wait_or_kill(
    child: &mut Child,
    timeout: Duration,
) -> std::io::Result<(Option<ExitStatus>, bool, bool)> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((Some(status), false, false));
        }
        let interrupted = interrupted();
        if interrupted || Instant::now() >= deadline {
            kill_group(child.id());
            let status = child.wait()?;
            return Ok((Some(status), !interrupted, interrupted));
        }
        thread::sleep(Duration::from_millis(5));
    }
}

fn kill_group(pid: u32) {
    // SAFETY: plain syscall; the group id is the child's pid (process_group(0)).
    unsafe { libc::killpg(pid as libc::pid_t, libc::SIGKILL) };
}

fn tail(mut stream: impl Read) -> String {
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    let start = all.len().saturating_sub(TAIL_BYTES);
    String::from_utf8_lossy(&all[start..]).trim_end().to_owned()
}

/// Whether the variant recorded its end (it returned or panicked), however
/// its process ended afterwards.
pub fn ended(run: &ChildRun) -> bool {
    run.lines
        .iter()
        .any(|line| serde_json::from_str::<Event>(line).is_ok_and(|event| is_end(&event)))
}

/// The event a variant records as it returns or panics.
fn is_end(event: &Event) -> bool {
    matches!(event, Event::End { .. } | Event::Panic { .. })
}

/// The outcome a child run amounts to.
pub fn outcome(run: &ChildRun) -> Outcome {
    let mut outcome = Outcome::empty();
    let mut ended = false;
    let mut garbled = false;
    for line in run.lines.iter().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Event>(line) {
            Ok(event) => {
                ended |= is_end(&event);
                outcome.apply(event);
            }
            Err(_) => garbled = true,
        }
    }
    let signal = run.status.and_then(|s| s.signal());
    outcome.termination = if run.interrupted {
        Termination::Interrupted
    } else if run.timed_out {
        Termination::TimedOut
    } else if let Some(signal) = signal {
        // A crash after the variant's end (in teardown, say) is still a crash.
        Termination::Signaled {
            signal: signal_name(signal),
        }
    } else if garbled {
        Termination::Garbled
    } else if ended {
        outcome.termination
    } else {
        Termination::Exited {
            code: run.status.and_then(|s| s.code()).unwrap_or(-1),
        }
    };
    outcome.stderr_tail = run.output_tail.clone();
    outcome.seconds = run.seconds;
    outcome
}

pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTRAP => "SIGTRAP".into(),
        other => format!("signal {other}"),
    }
}

/// The program that runs a variant's child: `program` as declared for an
/// external runner, looked up next to the current binary first, then one
/// directory up (a test binary lives in `target/<profile>/deps`, the program
/// in `target/<profile>`), then on PATH.
pub fn external_program(program: &str) -> PathBuf {
    let exe = std::env::current_exe().ok();
    let dirs = exe.iter().flat_map(|exe| exe.ancestors().skip(1).take(2));
    dirs.map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| Path::new(program).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every child sees NVLink multicast off, even one whose command asks
    /// for it on: a trial cannot turn it back on for what it starts.
    #[test]
    fn every_child_runs_with_nvlink_multicast_off() {
        let names: Vec<String> = MULTICAST_OFF.iter().map(|(k, _)| format!("${k}")).collect();
        let cmd = ChildCommand {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), format!("echo {}", names.join(" "))],
            target: "multicast".into(),
            timeout: Duration::from_secs(10),
            env: vec![("NCCL_NVLS_ENABLE".into(), "1".into())],
        };
        let run = run(&cmd).expect("sh starts");
        let want: Vec<&str> = MULTICAST_OFF.iter().map(|(_, v)| *v).collect();
        assert_eq!(run.output_tail.trim(), want.join(" "));
    }
}
