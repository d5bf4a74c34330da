//! The child side: a re-executed harness binary that runs one variant.

use std::fs::OpenOptions;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::exit;

use casebook_model::{Event, Recorder, Runner, Scenario};

use crate::environment;

/// What the child must run: `<slug>::<variant>`, or [`PROBE`].
pub const TARGET_ENV: &str = "CASEBOOK_CHILD";
/// The file the child appends its events to, one JSON line each.
pub const EVENTS_ENV: &str = "CASEBOOK_EVENTS";
/// The target that reports the GPU and driver instead of running a variant.
pub const PROBE: &str = "probe";

/// Exit code of a child whose variant panicked.
pub const PANIC_EXIT: i32 = 101;
/// Exit code of a child asked for something it does not know.
pub const UNKNOWN_TARGET_EXIT: i32 = 64;

/// If this process is a child, runs its target and exits; otherwise returns.
/// Call it first thing in `main` of every harness binary.
pub fn serve_if_child(catalog: &[Scenario]) {
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
    let variant = target.split_once("::").and_then(|(slug, name)| {
        catalog
            .iter()
            .find(|s| s.slug == slug)
            .and_then(|s| s.variant(name))
    });
    let Some(variant) = variant else {
        eprintln!("no variant named {target}");
        exit(UNKNOWN_TARGET_EXIT);
    };
    let Runner::InProcess(run) = variant.runner else {
        eprintln!("{target} runs as another program, not in this one");
        exit(UNKNOWN_TARGET_EXIT);
    };
    match catch_unwind(AssertUnwindSafe(|| run(&mut rec))) {
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
