//! The child side: a re-executed harness binary that runs one variant.

use std::fs::OpenOptions;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::exit;

use casebook_driver::run_cpp;
use casebook_model::{CppFn, Event, Recorder, Runner, Scenario, TrialId, VariantFn};

use crate::probe;
use crate::protocol::{EVENTS_ENV, PANIC_EXIT, PROBE, TARGET_ENV, UNKNOWN_TARGET_EXIT};

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
        let trial: TrialId = target.parse().ok()?;
        let variant = catalog
            .iter()
            .find(|s| s.slug == trial.scenario)?
            .variant(&trial.variant)?;
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
        probe::probe_here(&mut rec);
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
