//! The data is read as float4 from a slice that starts one float into its
//! buffer: 4 bytes past a multiple of 16.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;

use crate::names::*;
use crate::{HEADER, aligned, finish, launch, setup};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut p = setup(rec)?;
    // ANCHOR: run
    let data = p.record.slice(HEADER..); // 4 bytes into a 256-byte aligned buffer
    let launched = rec.step(
        "scale4 launch",
        launch(&p.stream, &p.scale4, &data, &mut p.out, 4), // BUG: float4 loads at data
    );
    let synced = launched.and_then(|()| rec.step("cuStreamSynchronize", p.stream.synchronize()));
    // ANCHOR_END: run
    rec.fact(ALIGNED, aligned(&p.stream, &data));
    rec.fact(LOADS, "float4 (16 bytes)");
    finish(rec, p, synced);
    Ok(())
}
