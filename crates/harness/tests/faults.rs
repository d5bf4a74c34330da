//! Fault injection, on the CPU: variants that crash, abort, hang, panic,
//! exit without reporting, write garbage or leave a process behind. The
//! harness must record each as what it did, and go on to the next.

use std::io::{BufRead, BufReader};
use std::process::ExitCode;
use std::time::Duration;

use casebook_harness::child;
use casebook_harness::judge::Verdict;
use casebook_harness::protocol::{EVENTS_ENV, UNKNOWN_TARGET_EXIT};
use casebook_harness::runner::scheduler::Placement;
use casebook_harness::runner::{self, Trial as Planned, executor};
use casebook_harness::{isolation, lock};
use casebook_model::{
    Expect, Program, Recorder, Role, Scenario, Symptom, Termination, Variant, VariantFn, vocabulary,
};
use libtest_mimic::{Arguments, Failed, Trial};

vocabulary! {
    check GOT_TO_ABORT = "got as far as the abort";
    check STARTED = "started";
    check WROTE_ONE_LINE = "wrote one good line";
    check RAN = "ran";
    check SHOWED_ITS_SYMPTOM = "showed its symptom";
    measure GRANDCHILD_PID = "grandchild_pid" in Count;
}

fn segfault(_: &mut Recorder) -> anyhow::Result<()> {
    // SAFETY: none; this is the crash under test: a real invalid access.
    unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
    unreachable!()
}

fn abort(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check(GOT_TO_ABORT, true);
    std::process::abort()
}

fn hang(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check(STARTED, true);
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

fn panics(_: &mut Recorder) -> anyhow::Result<()> {
    panic!("the variant gave up")
}

fn exits_silently(_: &mut Recorder) -> anyhow::Result<()> {
    std::process::exit(7)
}

fn garbage(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check(WROTE_ONE_LINE, true);
    let path = std::env::var(EVENTS_ENV)?;
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    std::io::Write::write_all(&mut file, b"this is not an event\n")?;
    Ok(())
}

/// Shows its declared symptom, then crashes for another reason.
fn fails_then_crashes(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check(SHOWED_ITS_SYMPTOM, false);
    std::process::abort()
}

fn leaves_a_grandchild(rec: &mut Recorder) -> anyhow::Result<()> {
    let grandchild = std::process::Command::new("sleep").arg("600").spawn()?;
    rec.measure(GRANDCHILD_PID, grandchild.id() as f64);
    std::mem::forget(grandchild);
    Ok(())
}

/// Waits to be killed by hand (by the test, with SIGKILL), as a user might
/// kill a variant during a run; says where it is first.
fn killed_by_hand(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check(STARTED, true);
    std::fs::write(
        pid_file(std::os::unix::process::parent_id()),
        std::process::id().to_string(),
    )?;
    std::thread::sleep(Duration::from_secs(60));
    Ok(())
}

fn pid_file(test_pid: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("casebook-faults-{test_pid}.pid"))
}

fn clean(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check(RAN, true);
    Ok(())
}

fn catalog() -> Vec<Scenario> {
    let v =
        |name, expect, run: VariantFn| Variant::new(name, Role::Broken, expect, Program::host(run));
    vec![Scenario {
        slug: "faults",
        title: "the harness survives its variants",
        cause: "test-only variants that misbehave on purpose",
        fix: "",
        symptoms: &[],
        requires: &[],
        reports: &[],
        claims: &[],
        variants: vec![
            v(
                "segfault",
                Expect::Fails(Symptom::Crashed("SIGSEGV".into())),
                segfault,
            ),
            v(
                "abort",
                Expect::Fails(Symptom::Crashed("SIGABRT".into())),
                abort,
            ),
            v("hang", Expect::Fails(Symptom::TimedOut), hang).timeout(Duration::from_secs(1)),
            v("panic", Expect::Fails(Symptom::Panicked), panics),
            v("exit", Expect::Fails(Symptom::Exited(7)), exits_silently),
            v("garbage", Expect::Fails(Symptom::Garbled), garbage),
            Variant::fixed("grandchild", Program::host(leaves_a_grandchild)),
            Variant::fixed("clean", Program::host(clean)),
            v(
                "killed-by-hand",
                Expect::Fails(Symptom::Crashed("SIGKILL".into())),
                killed_by_hand,
            ),
            v("slow", Expect::Fails(Symptom::TimedOut), hang),
            v(
                "fails-then-crashes",
                Expect::Fails(Symptom::check_failed(SHOWED_ITS_SYMPTOM)),
                fails_then_crashes,
            ),
        ],
    }]
}

/// Runs the variant `name` of [`catalog`] in a child, as the runner does.
fn execute(name: &str) -> Result<executor::TrialRecord, Failed> {
    let catalog = catalog();
    let scenario = &catalog[0];
    let variant = scenario.variant(name).expect("declared");
    executor::run(Planned { scenario, variant }, &[]).map_err(|e| Failed::from(e.to_string()))
}

fn expect_termination(name: &'static str, want: Termination) -> Trial {
    Trial::test(format!("faults::{name}"), move || {
        let record = execute(name)?;
        if record.outcome.termination != want {
            return Err(format!(
                "termination {:?}, want {want:?}",
                record.outcome.termination
            )
            .into());
        }
        if record.judgement.verdict != Verdict::Pass {
            return Err(format!("not judged as declared: {:?}", record.judgement).into());
        }
        Ok(())
    })
}

/// Set when this binary runs as the interrupted run of
/// `faults::an-interrupt-marks-unfinished-trials-not-run`.
const INTERRUPTED_RUN_ENV: &str = "CASEBOOK_FAULTS_INTERRUPTED_RUN";

/// A run of `clean`, `slow` and `clean` one at a time, with Ctrl-C handling
/// on; prints `ran <name>` or `not run <name>` per trial, and the pid of
/// the slow child. The test sends it SIGINT while `slow` runs.
fn interrupted_run() -> ExitCode {
    runner::stop_on_signals();
    let catalog = catalog();
    let s = &catalog[0];
    let trials: Vec<Planned> = ["clean", "slow", "grandchild"]
        .iter()
        .map(|n| Planned {
            scenario: s,
            variant: s.variant(n).unwrap(),
        })
        .collect();
    let executed = runner::run(
        &trials,
        1,
        &Placement::default(),
        &Default::default(),
        |t, _, _| {
            println!("ran {}", t.name());
        },
    );
    for name in executed.not_run(&trials) {
        println!("not run {name}");
    }
    ExitCode::from(if isolation::interrupted() {
        casebook_report::Exit::Interrupted
    } else {
        casebook_report::Exit::Success
    })
}

/// Set (to the lock file) when this binary runs as the second run of
/// `faults::a-second-run-waits-for-the-gpu-lock`.
const SECOND_RUN_ENV: &str = "CASEBOOK_FAULTS_SECOND_RUN";

/// What the second run prints once it holds the lock.
const GOT_THE_LOCK: &str = "got the lock";

/// Takes the lock at `$CASEBOOK_FAULTS_SECOND_RUN`, waiting for the test
/// that holds it, and says so on stdout.
fn second_run(path: &std::ffi::OsStr) -> ExitCode {
    match lock::acquire_at(std::path::Path::new(path), "second") {
        Ok(_held) => {
            println!("{GOT_THE_LOCK}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    child::serve_if_child(&catalog());
    if std::env::var_os(INTERRUPTED_RUN_ENV).is_some() {
        return interrupted_run();
    }
    if let Some(path) = std::env::var_os(SECOND_RUN_ENV) {
        return second_run(&path);
    }
    let args = Arguments::from_args();
    let mut trials = vec![
        expect_termination(
            "segfault",
            Termination::Signaled {
                signal: "SIGSEGV".into(),
            },
        ),
        expect_termination(
            "abort",
            Termination::Signaled {
                signal: "SIGABRT".into(),
            },
        ),
        expect_termination("hang", Termination::TimedOut),
        expect_termination("panic", Termination::Panicked),
        expect_termination("exit", Termination::Exited { code: 7 }),
        expect_termination("garbage", Termination::Garbled),
        expect_termination("clean", Termination::Completed),
    ];
    trials.push(Trial::test(
        "faults::a-crash-after-the-symptom-fails-the-trial",
        || {
            let j = execute("fails-then-crashes")?.judgement;
            match (j.verdict, j.reason.as_deref()) {
                (Verdict::Fail, Some(why)) if why.contains("but also crashed: SIGABRT") => Ok(()),
                _ => Err(format!("judged {j:?}").into()),
            }
        },
    ));
    trials.push(Trial::test("faults::events-before-a-crash-survive", || {
        let record = execute("abort")?;
        match record.outcome.check(GOT_TO_ABORT) {
            Some(true) => Ok(()),
            other => Err(format!("the check recorded before the abort is {other:?}").into()),
        }
    }));
    trials.push(Trial::test(
        "faults::a-hung-child-is-killed-on-time",
        || {
            let record = execute("hang")?;
            if record.outcome.seconds > 10.0 {
                return Err(
                    format!("took {:.1} s to kill a 1 s timeout", record.outcome.seconds).into(),
                );
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "faults::a-grandchild-dies-with-its-group",
        || {
            let record = execute("grandchild")?;
            let pid = record
                .outcome
                .measure(GRANDCHILD_PID)
                .ok_or("no pid recorded")? as libc::pid_t;
            std::thread::sleep(Duration::from_millis(200));
            // A zombie would still answer kill(pid, 0); /proc tells a live one.
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let alive = state
                .split(") ")
                .nth(1)
                .is_some_and(|rest| !rest.starts_with('Z'));
            if alive {
                return Err(format!("grandchild {pid} outlived its group").into());
            }
            Ok(())
        },
    ));
    trials.push(Trial::test("faults::an-unknown-target-is-refused", || {
        let cmd = isolation::ChildCommand::this_binary(
            "faults::nonexistent".into(),
            Duration::from_secs(10),
        )
        .map_err(|e| e.to_string())?;
        let run = isolation::run(&cmd).map_err(|e| e.to_string())?;
        match run.status.and_then(|s| s.code()) {
            Some(UNKNOWN_TARGET_EXIT) => Ok(()),
            other => Err(format!("exit {other:?}").into()),
        }
    }));
    trials.push(Trial::test(
        "faults::side-by-side-every-fault-is-recorded-and-the-rest-run",
        || {
            let catalog = catalog();
            let s = &catalog[0];
            let trials: Vec<Planned> = s
                .variants
                .iter()
                .filter(|v| !matches!(v.name, "slow" | "killed-by-hand" | "fails-then-crashes"))
                .map(|v| Planned {
                    scenario: s,
                    variant: v,
                })
                .collect();
            let executed = runner::run(
                &trials,
                4,
                &Placement::default(),
                &Default::default(),
                |_, _, _| {},
            );
            for (t, r) in trials.iter().zip(&executed.records) {
                let r = r.as_ref().ok_or(format!("{} did not run", t.name()))?;
                if r.judgement.verdict != Verdict::Pass {
                    return Err(format!("{}: {:?}", t.name(), r.judgement).into());
                }
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "faults::a-variant-killed-by-hand-is-recorded-as-killed",
        || {
            let catalog = catalog();
            let s = &catalog[0];
            let file = pid_file(std::process::id());
            let _ = std::fs::remove_file(&file);
            let killer = std::thread::spawn(move || {
                for _ in 0..500 {
                    if let Some(pid) = std::fs::read_to_string(&file)
                        .ok()
                        .and_then(|t| t.trim().parse::<i32>().ok())
                    {
                        // SAFETY: plain syscall on the child this test started.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                        let _ = std::fs::remove_file(&file);
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                false
            });
            let trials = [
                Planned {
                    scenario: s,
                    variant: s.variant("killed-by-hand").unwrap(),
                },
                Planned {
                    scenario: s,
                    variant: s.variant("clean").unwrap(),
                },
            ];
            let executed = runner::run(
                &trials,
                1,
                &Placement::default(),
                &Default::default(),
                |_, _, _| {},
            );
            if !killer.join().unwrap_or(false) {
                return Err("the variant never said where it was".into());
            }
            let killed = executed.records[0]
                .as_ref()
                .ok_or("no record of the killed variant")?;
            if killed.outcome.check(STARTED) != Some(true) {
                return Err("what it recorded before the kill is lost".into());
            }
            if killed.judgement.verdict != Verdict::Pass {
                return Err(
                    format!("not recorded as killed: {:?}", killed.outcome.termination).into(),
                );
            }
            match &executed.records[1] {
                Some(r) if r.judgement.verdict == Verdict::Pass => Ok(()),
                other => Err(format!("the next variant was affected: {other:?}").into()),
            }
        },
    ));
    trials.push(Trial::test(
        "faults::an-interrupt-marks-unfinished-trials-not-run",
        || {
            // What the run prints on stderr when interrupted is read and
            // checked here, not let through into this suite's output.
            let child = std::process::Command::new(std::env::current_exe().unwrap())
                .env(INTERRUPTED_RUN_ENV, "1")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?;
            // `slow` starts once `clean` is done; give both a moment.
            std::thread::sleep(Duration::from_millis(1500));
            // SAFETY: plain syscall on the child this test started.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&out.stdout);
            let want = [
                "ran faults::clean",
                "not run faults::slow",
                "not run faults::grandchild",
            ];
            if text.lines().collect::<Vec<_>>() != want {
                return Err(format!("printed {text:?}, want {want:?}").into());
            }
            let said = String::from_utf8_lossy(&out.stderr);
            if !said.contains("interrupted: stopping the running trials") {
                return Err(format!("did not say it was interrupted: {said:?}").into());
            }
            match out.status.code() {
                Some(code) if code == i32::from(casebook_report::Exit::Interrupted.code()) => {
                    Ok(())
                }
                other => Err(format!("exit {other:?}").into()),
            }
        },
    ));
    trials.push(Trial::test(
        "faults::a-second-run-waits-for-the-gpu-lock",
        || {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let path = dir.path().join("gpu.lock");
            let first = lock::acquire_at(&path, "first").map_err(|e| e.to_string())?;
            // The second run is a process of its own, as a second run is;
            // what it prints while it waits is read and checked here, not
            // let through into this suite's output.
            let mut second = std::process::Command::new(std::env::current_exe().unwrap())
                .env(SECOND_RUN_ENV, &path)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?;
            let stdout = second.stdout.take().expect("piped");
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
            let stop = |mut second: std::process::Child, why: String| {
                let _ = second.kill();
                let _ = second.wait();
                Err(why.into())
            };
            if let Ok(line) = rx.recv_timeout(Duration::from_millis(500)) {
                return stop(second, format!("the second run did not wait: {line}"));
            }
            drop(first);
            match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(line) if line == GOT_THE_LOCK => {}
                Ok(line) => return stop(second, format!("the second run printed {line:?}")),
                Err(_) => return stop(second, "the second run never got the lock".into()),
            }
            let out = second.wait_with_output().map_err(|e| e.to_string())?;
            let said = String::from_utf8_lossy(&out.stderr);
            let holder = format!(
                "waiting for the GPU: casebook first (pid {}",
                std::process::id()
            );
            if !said.contains(&holder) {
                return Err(format!("the second run did not name the holder: {said:?}").into());
            }
            Ok(())
        },
    ));
    libtest_mimic::run(&args, trials).exit_code()
}
