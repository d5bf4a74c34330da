//! `open-streams`: seed 000's "leaving open CUDA streams can interfere with
//! subsequent operations", measured. A call returns with its stream still
//! open, and the next call's `cudaMemcpy` is timed after it. Idle open
//! streams cost nothing; a blocking stream (`cudaStreamCreate`) whose work is
//! still running makes the next call wait for that work, because the legacy
//! default stream, where `cudaMemcpy` runs, waits for every blocking stream. A
//! non-blocking stream's running work does not. The fix finishes its work and
//! destroys its stream before the call returns. And what a stream left open
//! holds: 100,000 calls that each make a stream and run a kernel on it,
//! leaving it open or destroying it, with the device's free memory before
//! and after them.

use casebook_model::prelude::*;

casebook_model::case_modules!();

casebook_model::scenario!(Scenario {
    title: "The next call is slow for no reason (a stream left open with its work still running)",
    cause: "cudaMemcpy and every other call on the legacy default stream wait for all work in \
            blocking streams (those made by cudaStreamCreate). A call that returns with work still \
            queued on such a stream makes the next call wait for it; idle open streams cost nothing. \
            Synchronise and destroy a call's stream before it returns, or create it non-blocking.",
    fix: "Before a call returns, cudaStreamSynchronize its stream and cudaStreamDestroy it, so no \
          unfinished work on a blocking stream delays the next call's cudaMemcpy.",
    symptoms: &["slow calls, no error"],
    requires: Requirement::GPU,
    variants: variants![
        // Alone, as are its controls: a neighbour's work on the GPU
        // would slow the next calls they time in microseconds.
        cpp_pair!(Symptom::check_failed(NO_WAIT)).with_broken(|v| v.alone()),
        Variant::records("destroy-only-cpp", cpp::destroy_only).one_change(
            "fixed-cpp",
            "whether the call waits for its stream before destroying it: \
             yes there, no here",
            "return close_stream(r, true);",
            "return close_stream(r, false);",
        ),
        Variant::broken(
            "unmanaged-cpp",
            Symptom::check_failed(EACH_CALL_READS_ITS_OWN_INPUT),
            cpp::unmanaged,
        ),
        Variant::fixed("managed-cpp", cpp::managed).one_change(
            "unmanaged-cpp",
            "whether each call waits for its stream and destroys it \
             before it returns: no there, yes here",
            "return model_calls(r, Manage::Nothing);",
            "return model_calls(r, Manage::SyncAndDestroy);",
        ),
        Variant::records("destroyed-unsynced-cpp", cpp::destroyed_unsynced).one_change(
            "managed-cpp",
            "whether each call waits for its stream before destroying it: \
             yes there, no here",
            "return model_calls(r, Manage::SyncAndDestroy);",
            "return model_calls(r, Manage::DestroyOnly);",
        ),
        // Alone: they read the device's free memory.
        Variant::broken(
            "leak-streams-cpp",
            Symptom::check_failed(DEVICE_MEMORY_STAYS_WHERE_IT_WAS),
            cpp::leak_streams,
        )
        .alone(),
        Variant::fixed("destroy-streams-cpp", cpp::destroy_streams)
            .one_change(
                "leak-streams-cpp",
                "whether each call destroys the stream it made: no there, yes \
                 here",
                "return stream_per_call(r, false);",
                "return stream_per_call(r, true);",
            )
            .alone(),
        Variant::records("no-work-cpp", cpp::no_work)
            .one_change(
                "broken-cpp",
                "how long the kernel each first call leaves on its open \
                 stream spins: 200 ms there, none here",
                "return leave_streams_open(r, kWorkNs);",
                "return leave_streams_open(r, 0);",
            )
            .alone(),
    ],
});

const CLAIMS: &[Claim] = &[
    Claim {
        id: "000-open-streams-interfere",
        source: Source::SEED_000,
        quote: "Similarly, leaving open CUDA streams can interfere with subsequent operations.",
        // The article's setting: model calls that each make a stream, run
        // their kernel on it and leave it open (leak-streams-cpp, 100,000
        // calls). "Subsequent operations": an allocation of half the memory
        // free before the calls, served then, asked for again after them.
        // Refused: what the open streams hold interferes with it (confirmed).
        // Served: refuted. The control destroys each call's stream
        // (destroy-streams-cpp, one change). Timing is recorded beside it
        // (broken-cpp): 1000 idle open streams do not slow the next call,
        // and a stream left with work delays it as long as the same stream
        // destroyed with its work unfinished, so the time is the work's,
        // not the open stream's.
        judged_by: "leak-streams-cpp",
        control: Control::Run("destroy-streams-cpp"),
        judge: |o: &Outcome| {
            ClaimVerdict::confirmed_if(
                o.flag(AN_ALLOCATION_SERVED_BEFORE_THE_CALLS_IS_REFUSED_AFTER_THEM),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "000-stream-destroy-releases",
        source: Source::SEED_000,
        quote: "cudaStreamDestroy(stream); // Release the stream",
        judged_by: "destroy-streams-cpp",
        control: Control::Run("leak-streams-cpp"),
        // What a stream left open holds, read where the control leaves
        // 100,000 of them open (a kernel run on each): the device's free
        // memory falls. Released: the same calls, each destroying its
        // stream, leave it where it was (less than 4096 bytes a call).
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(DEVICE_MEMORY_STAYS_WHERE_IT_WAS)),
        ..Claim::EITHER
    },
    Claim {
        id: "000-synced-stream-no-conflicts",
        source: Source::SEED_000,
        quote: "// ... subsequent model calls (No resource conflicts due to stream synchronization)",
        // A conflict, in this article, is one call's unfinished work meeting
        // the next call's ("leaving unmanaged streams can lead to resource
        // conflicts"): decided where calls share an input buffer, each
        // synchronising and destroying its stream before it returns. Does
        // each call's model read its own input? The control destroys each
        // stream without synchronising it (one change). (A wait of the next
        // call behind a blocking stream's work, fixed-cpp against
        // destroy-only-cpp, keeps the calls apart: it is not a conflict.)
        judged_by: "managed-cpp",
        control: Control::Run("destroyed-unsynced-cpp"),
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.check(EACH_CALL_READS_ITS_OWN_INPUT)),
        ..Claim::EITHER
    },
    Claim {
        id: "000-unmanaged-streams-resource-conflicts",
        source: Source::SEED_000,
        quote: "A stream is an asynchronous execution sequence on the GPU, and leaving unmanaged streams \
                can lead to resource conflicts and undefined behavior.",
        judged_by: "unmanaged-cpp",
        control: Control::Run("managed-cpp"),
        // Calls that each leave a stream working on a buffer they share: does
        // a call's model read what the next call wrote there?
        judge: |o: &Outcome| ClaimVerdict::refuted_if(o.check(EACH_CALL_READS_ITS_OWN_INPUT)),
        ..Claim::EITHER
    },
];
