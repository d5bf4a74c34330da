//! The article's claim, measured: a process allocates 4 GiB and exits
//! without freeing anything; another is killed with SIGKILL while it holds
//! 4 GiB. After each, the parent watches the free memory.
//!
//! The control, `forked-child`: the same, but each holder forks a child
//! before it ends, one that makes no CUDA call and only sleeps, as a worker
//! forked after CUDA started does. The child inherits the holder's open
//! descriptors of the driver, and with them its context: does the memory
//! stay while it lives, and come back when it ends?
//!
//! Its control, `forked-child-torn-down`: the same, but the holder that
//! exits first frees its memory and destroys its context, the explicit
//! cleanup the article asks for, while its forked child still lives; and
//! `forked-child-destroyed`, the context destroyed, the memory not freed.
//! Each explicit form runs, first and in the same run, a holder that leaves
//! its cleanup to the driver beside the same kind of child.

use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::names::*;
use crate::{
    FORK_ENV, MODE_ENV, Watch, kill_and_wait_gone, nvidia_smi_lists, nvidia_smi_lists_another,
    serve,
};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    arms(rec, false, Exit::Implicit)
}

// ANCHOR: forked_child
/// The control: each holder forks a sleeping child before it ends.
pub fn forked_child(rec: &mut Recorder) -> anyhow::Result<()> {
    arms(rec, true, Exit::Implicit)
}
// ANCHOR_END: forked_child

// ANCHOR: torn_down
/// Explicit cleanup beside the forked child: the holder that exits first
/// frees its memory and destroys its context (a killed one cannot).
pub fn torn_down(rec: &mut Recorder) -> anyhow::Result<()> {
    arms(rec, true, Exit::TornDown)
}
// ANCHOR_END: torn_down

// ANCHOR: destroyed
/// The article's advice as it says it, beside the forked child: the holder
/// that exits first destroys its context (the primary context's last
/// release), its memory not freed.
pub fn destroyed(rec: &mut Recorder) -> anyhow::Result<()> {
    arms(rec, true, Exit::Destroyed)
}
// ANCHOR_END: destroyed

// ANCHOR: destroyed_no_fork
/// The same without a forked child.
pub fn destroyed_no_fork(rec: &mut Recorder) -> anyhow::Result<()> {
    arms(rec, false, Exit::Destroyed)
}
// ANCHOR_END: destroyed_no_fork

// ANCHOR: freed_only
/// Half the cleanup beside the forked child: the holder that exits first
/// frees its memory but leaves its context to the driver.
pub fn freed_only(rec: &mut Recorder) -> anyhow::Result<()> {
    arms(rec, true, Exit::FreedOnly)
}
// ANCHOR_END: freed_only

/// How the holder that exits ends: leaving its memory and context to the
/// driver, freeing the one and destroying the other first, freeing the
/// memory only, or destroying the context only.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exit {
    Implicit,
    TornDown,
    FreedOnly,
    Destroyed,
}

impl Exit {
    /// The holder's mode.
    fn mode(self) -> &'static str {
        match self {
            Exit::Implicit => "exit",
            Exit::TornDown => "teardown",
            Exit::FreedOnly => "free",
            Exit::Destroyed => "destroy",
        }
    }
}

/// Kills the holder's child, if any, when dropped: nothing outlives the
/// trial, whatever returns early.
struct Child(Option<u32>);

impl Child {
    /// Kills it now; whether there was one.
    fn end(&mut self) -> bool {
        match self.0.take() {
            Some(pid) => {
                kill_and_wait_gone(pid);
                true
            }
            None => false,
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.end();
    }
}

/// A holder that takes its memory, forks a sleeping child if `forks`, and
/// exits the way `exit` says; returns once it has exited, with its child.
fn holder_exits(watch: &Watch, forks: bool, exit: Exit) -> anyhow::Result<Child> {
    let mut leaver = watch.command("holder")?;
    leaver.env(MODE_ENV, exit.mode());
    if forks {
        leaver.env(FORK_ENV, "1");
    }
    let mut leaver = leaver.spawn()?;
    watch.wait_held()?;
    let child = Child(watch.child(forks)?);
    leaver.wait()?;
    Ok(child)
}

fn arms(rec: &mut Recorder, forks: bool, exit: Exit) -> anyhow::Result<()> {
    if let Some(role) = worker::role() {
        return serve(rec, &role);
    }
    let watch = Watch::new(rec)?;

    if exit != Exit::Implicit {
        // In the same run, first, the holder that leaves its cleanup to the
        // driver: what the explicit cleanup is measured against.
        let mut child = holder_exits(&watch, forks, Exit::Implicit)?;
        let back = watch.back(rec, FREE_AFTER_AN_IMPLICIT_EXIT)?;
        rec.fact(AFTER_AN_IMPLICIT_EXIT, back);
        if child.end() {
            watch.back(rec, FREE_AFTER_ITS_CHILD_ENDS)?;
        }
    }

    let mut child = holder_exits(&watch, forks, exit)?;
    let back = watch.back(rec, FREE_AFTER_EXIT)?;
    rec.fact(AFTER_EXIT, back);
    // Who nvidia-smi shows now: the child, or any process but the watch.
    if let Some(pid) = child.0 {
        nvidia_smi_lists(rec, pid);
    }
    nvidia_smi_lists_another(rec);
    if child.end() {
        let back = watch.back(rec, FREE_AFTER_THE_CHILD_ENDS)?;
        rec.fact(BACK_ONCE_THE_CHILD_ENDS, back);
    }

    let mut holder = watch.command("holder")?;
    if forks {
        holder.env(FORK_ENV, "1");
    }
    let mut holder = holder.spawn()?;
    watch.wait_held()?;
    let mut child = Child(watch.child(forks)?);
    rec.fact(TAKEN_WHILE_THE_HOLDER_LIVES, watch.taken()?);
    holder.kill()?; // SIGKILL
    holder.wait()?;
    let back = watch.back(rec, FREE_AFTER_KILL)?;
    rec.fact(AFTER_KILL, back);
    child.end();
    Ok(())
}
