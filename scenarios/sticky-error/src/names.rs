vocabulary! {
    fact AFTER_RESET = "a call after the reset succeeds";
    fact RESET_RETURNS = "reset returns";
    fact SECOND = "second call returns";
    fact THIRD_CALL_RETURNS = "third call returns";
}
