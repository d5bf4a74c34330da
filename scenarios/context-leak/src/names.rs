vocabulary! {
    check FREE_MEMORY_RETURNS_TO_ITS_BASELINE = "free memory returns to its baseline";
    fact COST = "device memory per context";
    fact STILL_FREE = "device memory still free when it failed";
    measure BYTES_PER_CONTEXT = "bytes_per_context" in Bytes;
    measure CALLS_COMPLETED = "calls_completed" in Count;
    measure CONTEXT_SHARE_OF_DEVICE = "context_share_of_device" in Ratio;
    measure FREE_WHEN_IT_FAILED = "free_when_it_failed" in Bytes;
    series FREE_BYTES = "free_bytes" per "call" in Bytes;
}
