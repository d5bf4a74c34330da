vocabulary! {
    check SERVED = "the 256 MiB request is served";
    check THE_LARGE_BLOCK_HOLDS_WHAT_WAS_WRITTEN = "the large block holds what was written";
    fact CUMEMALLOC_SERVES_THE_SAME_REQUEST = "cuMemAlloc serves the same request";
    fact FREE_BYTES_EXCEED_THE_LARGEST_REQUEST_THE_POOL_SERVES = "free bytes exceed the largest request the pool serves";
    fact FREE_BYTES_IN_THE_REGION = "free bytes in the region";
    fact FREE_MEMORY_AFTER_EQUALS_FREE_MEMORY_BEFORE = "free memory after equals free memory before";
    fact KEPT_BLOCKS = "kept blocks";
    fact LARGEST_REQUEST_THE_POOL_SERVES = "largest request the pool serves";
    fact ONE_BLOCK_OF_90_OF_THE_SCATTERED_FREE_MEMORY_IS_SERVED = "one block of 90% of the scattered free memory is served";
    fact TEMPORARIES = "temporaries";
    fact THE_LARGE_ALLOCATION_SUCCEEDS = "the large allocation succeeds";
    measure BLOCKS_FILLED = "blocks_filled" in Count;
    measure FREE_AFTER = "free_after" in Bytes;
    measure FREE_BEFORE = "free_before" in Bytes;
    measure FREE_BYTES_FIGURE = "free_bytes" in Bytes;
    measure FREE_BYTES_SCATTERED = "free_bytes_scattered" in Bytes;
    measure LARGEST_OVER_FREE = "largest_over_free" in Ratio;
    measure LARGEST_REQUEST = "largest_request" in Bytes;
    measure LARGEST_REQUEST_SERVED = "largest_request_served" in Bytes;
    measure PAGE_BYTES = "page" in Bytes;
    series FREE_BYTES_CURVE = "free_bytes" per "temporaries freed" in Bytes;
    series LARGEST_REQUEST_BYTES = "largest_request_bytes" per "temporaries freed" in Bytes;
}
