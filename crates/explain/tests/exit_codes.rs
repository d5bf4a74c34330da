//! `casebook-explain`'s exit code, as a script reads it: the first answer
//! decides (0 a reproduced case, 16 a known failure, 15 nothing matches).

use std::io::Write;
use std::process::{Command, Stdio};

/// The exit code of `casebook-explain` given `text` on standard input.
fn exit_code(text: &str) -> i32 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_casebook-explain"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("casebook-explain starts");
    child
        .stdin
        .take()
        .expect("its standard input")
        .write_all(text.as_bytes())
        .expect("the text is written");
    child
        .wait()
        .expect("casebook-explain ends")
        .code()
        .expect("an exit code")
}

#[test]
fn a_reproduced_case_first_exits_0() {
    assert_eq!(
        exit_code("RuntimeError: CUDA error: misaligned address\n"),
        0
    );
}

#[test]
fn a_known_failure_first_exits_16_though_a_reproduced_case_follows() {
    // The Xid 48 report names an ECC error, which no program provokes; the
    // program's own line also matches a reproduced case, further down.
    let log = "\
CUDA error at kernel.cu:120 code=999(cudaErrorUnknown) \"cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost)\"
Mar  3 04:05:06 gpu7 kernel: [ 8812.331200] NVRM: Xid (PCI:0000:3b:00): 48, pid=2211, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.
";
    assert_eq!(exit_code(log), 16);
    assert_eq!(
        exit_code("CUDA driver version is insufficient for CUDA runtime version\n"),
        16
    );
}

#[test]
fn nothing_matching_exits_15_and_an_empty_text_2() {
    assert_eq!(
        exit_code("the quick brown fox jumps over the lazy dog\n"),
        15
    );
    assert_eq!(exit_code("  \n"), 2);
}

#[test]
fn words_of_a_description_never_make_a_known_failure_s_answer() {
    // A launcher's log whose words (closing, setting, environment,
    // variable) are those of a known failure's description, and no error's
    // words of any case: no answer. The known failure's own error still
    // finds it (above).
    let log = "\
WARNING:torch.distributed.run:
Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1796 closing signal SIGTERM
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1795) of binary: /home/ubuntu/env/bin/python3
";
    assert_eq!(exit_code(log), 15);
}
