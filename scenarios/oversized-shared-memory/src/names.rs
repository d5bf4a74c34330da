vocabulary! {
    check OUTPUT_HOLDS_INPUT_2_1 = "output holds input * 2 + 1";
    fact CUDAMEMSET_INPUT_1_0F_STORES_EACH_FLOAT_AS = "cudaMemset(input, 1.0f, …) stores each float as";
    fact EVERY_INPUT_FLOAT_HOLDS_THAT_VALUE = "every input float holds that value";
    fact THE_LARGE_ALLOCATION_AFTER_THE_KERNEL_SUCCEEDS = "the large allocation after the kernel succeeds";
    fact THE_PROGRAM_REPORTS_SUCCESS_ALTHOUGH_ITS_LAUNCH_FAILED = "the program reports success although its launch failed";
    fact THE_REQUESTED_SHARED_MEMORY_EXCEEDS_THE_OPT_IN_MAXIMUM = "the requested shared memory exceeds the opt-in maximum";
    measure FREE_AT_END = "free_at_end" in Bytes;
    measure FREE_AT_START = "free_at_start" in Bytes;
    measure MAX_DYNAMIC_SHARED_BYTES_OPTIN = "max_dynamic_shared_bytes_optin" in Bytes;
    measure TILES = "tiles" in Count;
}
