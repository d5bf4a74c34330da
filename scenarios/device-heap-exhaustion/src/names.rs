vocabulary! {
    check NO_THREAD_GETS_NULL = "no thread gets null";
    check OUTPUT_MATCHES_THE_CPU = "output matches the CPU";
    fact CUDAMALLOC_SERVES_NEARLY_ALL_FREE_MEMORY_WITH_THE_DEVICE_HEAP_IN_HOLES = "cudaMalloc serves nearly all free memory with the device heap in holes";
    fact EVERY_LAUNCH_RAN = "every launch ran";
    fact FREE_MEMORY_FALLS_AS_THE_GRID_GROWS = "free memory falls as the grid grows";
    fact HEAP = "default device heap";
    fact IN_KERNEL_ALLOCATIONS_CHANGE_CUDAMEMGETINFO_S_FREE_MEMORY = "in-kernel allocations change cudaMemGetInfo's free memory";
    fact NULLS = "threads whose new returned null";
    fact THE_ARTICLE_S_KERNEL_RUNS_WITHOUT_ERROR = "the article's kernel runs without error";
    fact THE_FIRST_LAUNCH_RESERVED_DEVICE_MEMORY = "the first launch reserved device memory";
    fact THE_FREED_BLOCKS_ADD_UP_TO_MORE_THAN_THE_LARGE_REQUEST = "the freed blocks add up to more than the large request";
    fact THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_AMONG_THE_HOLES = "the large in-kernel allocation is served among the holes";
    fact THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_BY_A_FRESH_HEAP = "the large in-kernel allocation is served by a fresh heap";
    fact THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_ONCE_THE_REST_IS_FREED = "the large in-kernel allocation is served once the rest is freed";
    measure CHANGE_FROM_SMALLEST_TO_LARGEST_GRID = "change_from_smallest_to_largest_grid" in Bytes;
    measure CUDAMALLOC_FREE_CHANGE = "cudamalloc_free_change" in Bytes;
    measure FREE_BEFORE_FIRST_LAUNCH = "free_before_first_launch" in Bytes;
    measure HEAP_BYTES_FREED = "heap_bytes_freed" in Bytes;
    measure HEAP_LIMIT_BEFORE = "heap_limit_before" in Bytes;
    measure HEAP_LIMIT_SET = "heap_limit_set" in Bytes;
    measure NULL_ALLOCATIONS = "null_allocations" in Count;
    measure NULL_ALLOCATIONS_IN_USE = "null_allocations_in_use" in Count;
    measure RESERVED_BY_FIRST_LAUNCH = "reserved_by_first_launch" in Bytes;
    measure SMALL_BLOCKS_ALLOCATED = "small_blocks_allocated" in Count;
    measure SMALL_BLOCKS_FREED = "small_blocks_freed" in Count;
    series DEVICE_BYTES_IN_USE = "device_bytes_in_use_after_launch" per "blocks in the grid" in Bytes;
}
