vocabulary! {
    check BACK = "device memory back where it started after the cleanup";
    fact FREE_NULL = "cudaFree(nullptr) released memory";
    fact RESET = "cudaDeviceReset released the runtime's allocation";
    fact SURVIVED = "the library context's allocation survived the reset";
    fact THE_DEVICE_HEAP_LIMIT_HAD_BEEN_RAISED = "the device-heap limit had been raised";
    fact THE_DEVICE_HEAP_LIMIT_IS_BACK_TO_ITS_DEFAULT = "the device-heap limit is back to its default";
    fact THE_POINTER_FROM_BEFORE_THE_RESET = "the pointer from before the reset";
    measure BASELINE_FREE = "baseline_free" in Bytes;
    measure HELD_AFTER_CLEANUP = "held_after_cleanup" in Bytes;
    measure HELD_AFTER_FREE_NULL = "held_after_free_null" in Bytes;
    measure HELD_AFTER_RESET = "held_after_reset" in Bytes;
    measure HELD_AFTER_SETUP = "held_after_setup" in Bytes;
    measure HELD_BEFORE_FREE_NULL = "held_before_free_null" in Bytes;
}
