vocabulary! {
    check GOOD_BATCHES_SUCCEED_BAD_ONES_FAIL = "good batches succeed, bad ones fail";
    check NO_LEAK = "failed calls leak no device memory";
    fact FAILED_CALLS = "failed calls";
    fact LEAK_PER_FAILURE = "device memory lost per failed call";
    measure BYTES_LOST = "bytes_lost" in Bytes;
    measure FAILED_CALLS_COUNT = "failed_calls" in Count;
    series FREE_BYTES = "free_bytes" per "call" in Bytes;
}
