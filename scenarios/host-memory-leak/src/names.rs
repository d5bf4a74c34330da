vocabulary! {
    check BACK = "host memory returns to its baseline";
    fact DEVICE_MOVED = "device free memory changes with the host leak";
    fact PER_CALL = "resident memory lost per call";
    measure DEVICE_FREE_AFTER = "device_free_after" in Bytes;
    measure DEVICE_FREE_BEFORE = "device_free_before" in Bytes;
    measure RESIDENT_AFTER = "resident_after" in Bytes;
    measure RESIDENT_BEFORE = "resident_before" in Bytes;
    measure RESIDENT_GROWTH_PER_CALL = "resident_growth_per_call" in Bytes;
    series RESIDENT_BYTES = "resident_bytes" per "call" in Bytes;
}
