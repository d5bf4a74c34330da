vocabulary! {
    check NO_WAIT = "the next call does not wait for the previous call's work";
    fact A_BLOCKING_STREAM_WITH_UNFINISHED_WORK_DELAYS_THE_NEXT_CALL = "a blocking stream with unfinished work delays the next call";
    fact A_NON_BLOCKING_STREAM_WITH_UNFINISHED_WORK_DELAYS_THE_NEXT_CALL = "a non-blocking stream with unfinished work delays the next call";
    fact IDLE_OPEN_STREAMS_DELAY_THE_NEXT_CALL = "idle open streams delay the next call";
    measure NEXT_CALL_AFTER_CLOSED_STREAM_S = "next_call_after_closed_stream_s" in Seconds;
    measure NEXT_CALL_AFTER_IDLE_STREAMS_S = "next_call_after_idle_streams_s" in Seconds;
    measure NEXT_CALL_AFTER_OPEN_BLOCKING_STREAM_S = "next_call_after_open_blocking_stream_s" in Seconds;
    measure NEXT_CALL_AFTER_OPEN_NON_BLOCKING_STREAM_S = "next_call_after_open_non_blocking_stream_s" in Seconds;
    measure NEXT_CALL_ALONE_S = "next_call_alone_s" in Seconds;
}
