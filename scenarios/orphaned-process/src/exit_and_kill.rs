//! The article's claim, measured: a process allocates 4 GiB and exits
//! without freeing anything; another is killed with SIGKILL while it holds
//! 4 GiB. After each, the parent watches the free memory.

use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::names::*;
use crate::{MODE_ENV, Watch, serve};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    if let Some(role) = worker::role() {
        return serve(rec, &role);
    }
    let watch = Watch::new(rec)?;

    let mut leaver = watch.command("holder")?;
    let mut leaver = leaver.env(MODE_ENV, "exit").spawn()?;
    watch.wait_held()?;
    leaver.wait()?;
    let back = watch.back(rec, FREE_AFTER_EXIT)?;
    rec.fact(AFTER_EXIT, back);

    let mut holder = watch.command("holder")?.spawn()?;
    watch.wait_held()?;
    holder.kill()?; // SIGKILL
    holder.wait()?;
    let back = watch.back(rec, FREE_AFTER_KILL)?;
    rec.fact(AFTER_KILL, back);
    Ok(())
}
