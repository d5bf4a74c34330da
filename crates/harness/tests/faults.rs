//! Fault injection, on the CPU: variants that crash, abort, hang, panic,
//! exit without reporting, write garbage or leave a process behind. The
//! harness must record each as what it did, and go on to the next.

use std::process::ExitCode;
use std::time::Duration;

use casebook_harness::child::{self, EVENTS_ENV};
use casebook_harness::judge::{Verdict, judge};
use casebook_harness::{isolation, trial};
use casebook_model::{
    Binding, Expect, Recorder, Role, Scenario, Symptom, Termination, Unit, Variant,
};
use libtest_mimic::{Arguments, Failed, Trial};

fn segfault(_: &mut Recorder) -> anyhow::Result<()> {
    // SAFETY: none; this is the crash under test: a real invalid access.
    unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
    unreachable!()
}

fn abort(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check("got as far as the abort", true);
    std::process::abort()
}

fn hang(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check("started", true);
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
    rec.check("wrote one good line", true);
    let path = std::env::var(EVENTS_ENV)?;
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    std::io::Write::write_all(&mut file, b"this is not an event\n")?;
    Ok(())
}

fn leaves_a_grandchild(rec: &mut Recorder) -> anyhow::Result<()> {
    let grandchild = std::process::Command::new("sleep").arg("600").spawn()?;
    rec.measure("grandchild_pid", grandchild.id() as f64, Unit::Count);
    std::mem::forget(grandchild);
    Ok(())
}

fn clean(rec: &mut Recorder) -> anyhow::Result<()> {
    rec.check("ran", true);
    Ok(())
}

fn catalog() -> Vec<Scenario> {
    let v = |name, expect, run| Variant::new(name, Role::Broken, Binding::Host, expect, run);
    vec![Scenario {
        slug: "faults",
        title: "the harness survives its variants",
        cause: "test-only variants that misbehave on purpose",
        symptoms: &[],
        requires: &[],
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
            Variant::fixed("grandchild", Binding::Host, leaves_a_grandchild),
            Variant::fixed("clean", Binding::Host, clean),
        ],
    }]
}

fn expect_termination(name: &'static str, want: Termination) -> Trial {
    Trial::test(format!("faults::{name}"), move || {
        let catalog = catalog();
        let scenario = &catalog[0];
        let variant = scenario.variant(name).expect("declared");
        let record = trial::run(scenario, variant).map_err(|e| Failed::from(e.to_string()))?;
        if record.outcome.termination != want {
            return Err(format!(
                "termination {:?}, want {want:?}",
                record.outcome.termination
            )
            .into());
        }
        if judge(variant, &record.outcome).verdict != Verdict::Pass {
            return Err(format!("not judged as declared: {:?}", record.judgement).into());
        }
        Ok(())
    })
}

fn main() -> ExitCode {
    child::serve_if_child(&catalog());
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
    trials.push(Trial::test("faults::events-before-a-crash-survive", || {
        let catalog = catalog();
        let record = trial::run(&catalog[0], catalog[0].variant("abort").unwrap())
            .map_err(|e| e.to_string())?;
        match record.outcome.check("got as far as the abort") {
            Some(true) => Ok(()),
            other => Err(format!("the check recorded before the abort is {other:?}").into()),
        }
    }));
    trials.push(Trial::test(
        "faults::a-hung-child-is-killed-on-time",
        || {
            let catalog = catalog();
            let record = trial::run(&catalog[0], catalog[0].variant("hang").unwrap())
                .map_err(|e| e.to_string())?;
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
            let catalog = catalog();
            let record = trial::run(&catalog[0], catalog[0].variant("grandchild").unwrap())
                .map_err(|e| e.to_string())?;
            let pid = record
                .outcome
                .measure("grandchild_pid")
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
            Some(child::UNKNOWN_TARGET_EXIT) => Ok(()),
            other => Err(format!("exit {other:?}").into()),
        }
    }));
    libtest_mimic::run(&args, trials).exit_code()
}
