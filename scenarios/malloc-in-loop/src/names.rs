vocabulary! {
    check FLOOR = "at least 10x faster than allocating in the loop";
    check OUTPUT_EQUALS_THE_CPU_S = "output equals the CPU's";
    check WAITS = "the hot loop never waits for the device";
    fact ONE_STEP_WAITS_FOR_THE_DEVICE = "one step waits for the device";
    fact SPEED_UP_OVER_THE_BROKEN_LOOP_CLEARS_10X = "speed-up over the broken loop clears 10x";
    measure BROKEN_LOOP_SECONDS = "broken_loop_seconds" in Seconds;
    measure LOOP_SECONDS = "loop_seconds" in Seconds;
    measure ONE_STEP_BEHIND_A_50MS_KERNEL = "one_step_behind_a_50ms_kernel" in Seconds;
    measure SECONDS_PER_STEP_SECONDS = "seconds_per_step" in Seconds;
    measure SPEEDUP_OVER_BROKEN = "speedup_over_broken" in Ratio;
    series SECONDS_PER_STEP_CURVE = "seconds_per_step" per "step" in Seconds;
}
