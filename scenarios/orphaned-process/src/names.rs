vocabulary! {
    check RETURNS = "memory returns when the worker is killed";
    fact AFTER_EXIT = "memory returns after the process exits without freeing";
    fact AFTER_KILL = "memory returns after the process is killed with SIGKILL";
    fact BACK_AFTER_HOLDER = "memory returns once the holder is killed";
    fact NVIDIA_SMI_QUERY_COMPUTE_APPS_LISTS_THE_HOLDER = "nvidia-smi --query-compute-apps lists the holder";
    fact THE_HOLDER_OUTLIVES_THE_WORKER = "the holder outlives the worker";
    measure FREE_AT_START = "free_at_start" in Bytes;
    measure FREE_AFTER_WORKER_KILLED = "free_after_the_worker_is_killed" in Bytes;
    measure FREE_AFTER_HOLDER_KILLED = "free_after_the_holder_is_killed" in Bytes;
    measure FREE_AFTER_EXIT = "free_after_exit" in Bytes;
    measure FREE_AFTER_KILL = "free_after_kill" in Bytes;
}
