//! A data-loader worker has started a helper process that holds device
//! memory. The worker hangs and is killed, as a training script's watchdog
//! would: its pid alone. The helper lives on, its parent gone.

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
    let mut loader = watch.command("loader")?.spawn()?;
    let holder = watch.wait_held()?;
    loader.kill()?; // BUG: the worker only; what it started lives on
    loader.wait()?;
    // ANCHOR_END: kill
    let back = watch.back(rec, FREE_AFTER_WORKER_KILLED)?;
    rec.check(RETURNS, back);
    rec.fact(THE_HOLDER_OUTLIVES_THE_WORKER, alive(holder));
    // What a user does next: find the holder, and kill it.
    nvidia_smi_lists(rec, holder);
    kill_and_wait_gone(holder);
    let back = watch.back(rec, FREE_AFTER_HOLDER_KILLED)?;
    rec.fact(BACK_AFTER_HOLDER, back);
    Ok(())
}
