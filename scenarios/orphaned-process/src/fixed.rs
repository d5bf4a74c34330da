//! The worker starts in a process group of its own, and the watchdog kills
//! the group: the helper goes with the worker.

use std::os::unix::process::CommandExt;

use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::names::*;
use crate::{RETURNS, Watch, alive, kill_and_wait_gone, nvidia_smi_lists, serve};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    if let Some(role) = worker::role() {
        return serve(rec, &role);
    }
    let watch = Watch::new(rec)?;
    // ANCHOR: kill
    let mut loader = watch.command("loader")?.process_group(0).spawn()?; // FIX: its own group
    let holder = watch.wait_held()?;
    // SAFETY: plain syscall; the group id is the worker's pid.
    unsafe { libc::killpg(loader.id() as libc::pid_t, libc::SIGKILL) }; // FIX: the whole group
    loader.wait()?;
    // ANCHOR_END: kill
    let back = watch.back(rec, FREE_AFTER_WORKER_KILLED)?;
    rec.check(RETURNS, back);
    rec.fact(THE_HOLDER_OUTLIVES_THE_WORKER, alive(holder));
    nvidia_smi_lists(rec, holder);
    kill_and_wait_gone(holder); // nothing left to kill, if the fix works
    Ok(())
}
