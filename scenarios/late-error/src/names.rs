vocabulary! {
    check AT_LAUNCH = "the fault is reported at the launch that caused it";
    fact FIRST = "first call to report the fault";
}
