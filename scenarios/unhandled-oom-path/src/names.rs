vocabulary! {
    check RETRY_OK = "a smaller batch succeeds after the out-of-memory error";
    fact BATCH_THAT_SUCCEEDED = "batch that succeeded";
    fact FIRST_BATCH_NEEDS = "first batch needs";
    measure BATCH_THAT_SUCCEEDED_COUNT = "batch_that_succeeded" in Count;
    measure BYTES_PER_SAMPLE_PER_LAYER = "bytes_per_sample_per_layer" in Bytes;
    measure FREE_AFTER = "free_after" in Bytes;
    measure FREE_BEFORE = "free_before" in Bytes;
}
