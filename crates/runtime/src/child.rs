//! The child side: a re-executed harness binary that runs one variant.

use std::fs::OpenOptions;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::exit;

use casebook_model::{CppFn, Event, Recorder, Runner, Scenario, VariantFn, run_cpp};

use crate::environment;

/// What the child must run: `<slug>::<variant>`, or [`PROBE`].
pub const TARGET_ENV: &str = "CASEBOOK_CHILD";
/// The pid of the harness that started the child: a process that carries
/// it belongs to a casebook run, and to a dead one once that pid is gone.
pub const RUN_ENV: &str = "CASEBOOK_RUN";
/// The file the child appends its events to, one JSON line each.
pub const EVENTS_ENV: &str = "CASEBOOK_EVENTS";
/// The target that reports the GPU and driver instead of running a variant.
pub const PROBE: &str = "probe";

/// Exit code of a child whose variant panicked.
pub const PANIC_EXIT: i32 = 101;
/// Exit code of a child asked for something it does not know.
pub const UNKNOWN_TARGET_EXIT: i32 = 64;

/// What a child calls.
#[derive(Clone, Copy)]
enum Run {
    Rust(VariantFn),
    Cpp(CppFn),
}

/// If this process is a child, runs its target and exits; otherwise returns.
/// Call it first thing in `main` of every harness binary.
pub fn serve_if_child(catalog: &[Scenario]) {
    serve(&|target| {
        let (slug, name) = target.split_once("::")?;
        let variant = catalog.iter().find(|s| s.slug == slug)?.variant(name)?;
        match variant.runner {
            Runner::InProcess(run) => Some(Run::Rust(run)),
            Runner::Cpp(run) => Some(Run::Cpp(run)),
            Runner::External { .. } | Runner::Python { .. } => {
                eprintln!("{target} runs as another program, not in this one");
                exit(UNKNOWN_TARGET_EXIT)
            }
        }
    });
}

/// The same for a binary of another binding (cust's, say), whose variants
/// are not in the catalogue as functions: `lookup` maps `<slug>::<variant>`
/// to the function that runs it.
pub fn serve_variants_if_child(lookup: &dyn Fn(&str) -> Option<VariantFn>) {
    serve(&|target| lookup(target).map(Run::Rust));
}

fn serve(lookup: &dyn Fn(&str) -> Option<Run>) {
    let Ok(target) = std::env::var(TARGET_ENV) else {
        return;
    };
    let Some(events) = std::env::var_os(EVENTS_ENV) else {
        eprintln!("{TARGET_ENV} is set but {EVENTS_ENV} is not");
        exit(UNKNOWN_TARGET_EXIT);
    };
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&events)
        .unwrap_or_else(|e| {
            eprintln!("cannot open the event file: {e}");
            exit(UNKNOWN_TARGET_EXIT)
        });
    let mut rec = Recorder::new(file);
    if target == PROBE {
        environment::probe_here(&mut rec);
        exit(0);
    }
    let Some(run) = lookup(&target) else {
        eprintln!("no variant named {target}");
        exit(UNKNOWN_TARGET_EXIT);
    };
    let call = || match run {
        Run::Rust(run) => run(&mut rec),
        Run::Cpp(run) => run_cpp(&mut rec, run),
    };
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(Ok(())) => rec.emit(&Event::End { error: None }),
        Ok(Err(error)) => rec.emit(&Event::End {
            error: Some(format!("{error:#}")),
        }),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "panic with a non-text payload".to_owned());
            rec.emit(&Event::Panic { message });
            exit(PANIC_EXIT);
        }
    }
    exit(0);
}
