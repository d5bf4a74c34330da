vocabulary! {
    check OTHER = "another process gets the memory the first phase freed";
    fact ALLOCATED_WHEN_THE_PHASE_IS_OVER = "allocated when the phase is over";
    fact RELEASES_CACHED = "releasing the cache returns the freed blocks to the device";
    fact RELEASES_LIVE = "releasing the cache returns blocks still referenced";
    fact RESERVED_WHEN_THE_PHASE_IS_OVER = "reserved when the phase is over";
    measure ALLOCATED_WHEN_THE_PHASE_IS_OVER_BYTES = "allocated_when_the_phase_is_over" in Bytes;
    measure BLOCK_BYTES = "block_bytes" in Bytes;
    measure FREE_AT_START = "free_at_start" in Bytes;
    measure RESERVED_WHEN_THE_PHASE_IS_OVER_BYTES = "reserved_when_the_phase_is_over" in Bytes;
    series ALLOCATED_BYTES = "allocated_bytes" per "call" in Bytes;
    series RESERVED_BYTES = "reserved_bytes" per "call" in Bytes;
}
