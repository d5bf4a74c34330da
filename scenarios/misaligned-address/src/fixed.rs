//! The same data; the kernel is chosen by the address: float4 loads only
//! where the slice starts on a multiple of 16, 4-byte loads otherwise.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;

use crate::names::*;
use crate::{HEADER, N, aligned, finish, launch, setup};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut p = setup(rec)?;
    // ANCHOR: run
    let data = p.record.slice(HEADER..);
    let vector = aligned(&p.stream, &data) && N.is_multiple_of(4); // FIX: vector loads only where the address allows them
    let (kernel, per_thread, call) = if vector {
        (&p.scale4, 4, "scale4 launch")
    } else {
        (&p.scale1, 1, "scale1 launch")
    };
    let launched = rec.step(
        call,
        launch(&p.stream, kernel, &data, &mut p.out, per_thread),
    );
    let synced = launched.and_then(|()| rec.step("cuStreamSynchronize", p.stream.synchronize()));
    // ANCHOR_END: run
    rec.fact(ALIGNED, vector);
    rec.fact(
        LOADS,
        if vector {
            "float4 (16 bytes)"
        } else {
            "float (4 bytes)"
        },
    );
    finish(rec, p, synced);
    Ok(())
}
