vocabulary! {
    check BOTH = "every process completes";
    fact ALLOCATED = "its allocation succeeded";
    measure FREE_SEEN_AT_START = "free_seen_at_start" in Bytes;
    measure PLANNED_BYTES = "planned_bytes" in Bytes;
    measure PROCESSES_COMPLETED = "processes_completed" in Count;
    measure TOTAL = "total" in Bytes;
    measure USED_WHEN_STARTED = "used_when_started" in Bytes;
}
