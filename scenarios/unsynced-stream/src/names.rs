vocabulary! {
    check FRESH = "host reads the finished result";
    check OVERLAP = "the two streams' kernels run at the same time";
    fact RATE = "stale reads";
    fact THE_STREAM_CUST_MADE_IS_NON_BLOCKING_AS_ASKED = "the stream cust made is non-blocking as asked";
    measure ONE_KERNEL_S = "one_kernel_s" in Seconds;
    measure OVERLAP_RATIO = "overlap" in Ratio;
    measure PIPELINE_S = "pipeline_s" in Seconds;
    measure READS = "reads" in Count;
    measure REPRODUCTION_RATE = "reproduction_rate" in Ratio;
    measure RUNS_MADE = "runs" in Count;
    measure STALE_READS = "stale_reads" in Count;
}
