//! The op's kernel is launched on device 0's stream, the context current on
//! this thread, with the address of data that lives on device 1: the raw
//! pointer an extension gets from `tensor.data_ptr()`, which says nothing of
//! its device.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;

use crate::{finish, launch, setup};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let p = setup(rec)?;
    // ANCHOR: run
    let launched = rec.step(
        "twice launch (device 0's stream)",
        launch(&p.stream0, &p.twice0, p.address), // BUG: device 0 runs it; the data is on device 1
    );
    let synced =
        launched.and_then(|()| rec.step("cuStreamSynchronize (device 0)", p.stream0.synchronize()));
    // ANCHOR_END: run
    finish(rec, p, synced);
    Ok(())
}
