//! The same launch on the stream of the device that holds the data, device
//! 1: the op runs where its pointer points.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;

use crate::{finish, launch, setup};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let p = setup(rec)?;
    // ANCHOR: run
    let launched = rec.step(
        "twice launch (device 1's stream)",
        launch(&p.stream1, &p.twice1, p.address), // FIX: the data's device runs it
    );
    let synced =
        launched.and_then(|()| rec.step("cuStreamSynchronize (device 1)", p.stream1.synchronize()));
    // ANCHOR_END: run
    finish(rec, p, synced);
    Ok(())
}
