vocabulary! {
    check NEIGHBOUR = "another process can allocate the freed memory";
    fact AFTER_A_SYNCHRONISE_THE_FREED_16_MIB_ARE_BACK = "after a synchronise, the freed 16 MiB are back";
    fact CUMEMALLOC_IN_THIS_PROCESS_IS_SERVED = "cuMemAlloc in this process is served";
    fact KEPT_RAISED = "with the threshold raised, the pool keeps the freed memory";
    fact RETURNED_DEFAULT = "at the default threshold, a synchronise returns the freed memory";
    fact THE_LARGE_ALLOCATION_SUCCEEDS = "the large allocation succeeds";
    measure FREE_AFTER_PHASE_DEFAULT_THRESHOLD = "free_after_phase_default_threshold" in Bytes;
    measure FREE_AFTER_PHASE_RAISED_THRESHOLD = "free_after_phase_raised_threshold" in Bytes;
    measure FREE_AFTER_SYNCHRONISE = "free_after_synchronise" in Bytes;
    measure FREE_AT_START = "free_at_start" in Bytes;
    measure FREE_BEFORE = "free_before" in Bytes;
    measure FREE_RIGHT_AFTER = "free_right_after" in Bytes;
    measure FREE_WHEN_THE_NEIGHBOUR_ASKS = "free_when_the_neighbour_asks" in Bytes;
    measure PHASE_BYTES = "phase_bytes" in Bytes;
}
