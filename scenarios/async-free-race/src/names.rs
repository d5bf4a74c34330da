vocabulary! {
    /// B copied what it was given: no run was corrupted.
    check READER_OK = "reader sees the values it was given";
    /// Every run's next allocation on A got the block just freed.
    fact REUSED = "the next allocation on A reuses the freed block";
    /// "none", "every run", or "some runs": how often the race showed.
    fact RATE = "corrupted reads";
    measure RUNS_MADE = "runs" in Count;
    measure CORRUPTED_READS = "corrupted_reads" in Count;
    measure REPRODUCTION_RATE = "reproduction_rate" in Ratio;
}
