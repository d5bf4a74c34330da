vocabulary! {
    check FREE_MEMORY_RETURNS_TO_ITS_BASELINE = "free memory returns to its baseline";
    check MODEL_OUTPUT_IS_RIGHT = "model output is right";
    fact AN_IMPLICIT_DROP_IN_THE_SAME_STATE_LOSES_AN_ERROR = "an implicit drop in the same state loses an error";
    fact BUFFER_PER_CALL = "buffer per call";
    fact CUMEMFREE_FAILS_AFTER_THE_FAULT = "cuMemFree fails after the fault";
    fact FAILED_AFTER_FILL = "failed after about free/leak calls";
    fact SECOND_CALL_OK = "second call at the article's size succeeds";
    fact THE_KERNEL_FAULTED = "the kernel faulted";
    fact WHAT_THE_PROGRAM_LEARNS_FROM_THE_IMPLICIT_DROP = "what the program learns from the implicit drop";
    measure BYTES_PER_CALL = "bytes_per_call" in Bytes;
    measure CALLS_COMPLETED = "calls_completed" in Count;
    measure FREE_AFTER = "free_after" in Bytes;
    measure FREE_BEFORE = "free_before" in Bytes;
    series FREE_BYTES = "free_bytes" per "call" in Bytes;
}
