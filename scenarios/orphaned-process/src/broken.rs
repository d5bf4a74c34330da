//! A data-loader worker has started a helper process that holds device
//! memory. The worker hangs and is killed, as a training script's watchdog
//! would: its pid alone. The helper lives on, its parent gone.

use casebook_harness::worker;
use casebook_model::Recorder;

use crate::{RETURNS, Watch, alive, kill_and_wait_gone, nvidia_smi_lists, serve};

pub(crate) const BACK_AFTER_HOLDER: &str = "memory returns once the holder is killed";

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
    let back = watch.back(rec, "free_after_the_worker_is_killed")?;
    rec.check(RETURNS, back);
    rec.fact("the holder outlives the worker", alive(holder));
    // What a user does next: find the holder, and kill it.
    nvidia_smi_lists(rec, holder);
    kill_and_wait_gone(holder);
    let back = watch.back(rec, "free_after_the_holder_is_killed")?;
    rec.fact(BACK_AFTER_HOLDER, back);
    Ok(())
}
