vocabulary! {
    check EVERY_CALL = "every call succeeds";
    check STABLE = "free memory stays where the first call left it";
    fact FREE_MEMORY_LEFT_FOR_THE_CALLS = "free memory left for the calls";
    measure BYTES_PER_HANDLE = "bytes_per_handle" in Bytes;
    measure CALLS_COMPLETED = "calls_completed" in Count;
    series FREE_BYTES = "free_bytes" per "call" in Bytes;
}
