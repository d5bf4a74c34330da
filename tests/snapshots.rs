//! The snapshot regression suite: every variant of every scenario, each in
//! its own child process, judged and compared with its committed snapshot.
//! Without a GPU the GPU trials are ignored, with the reason.

fn main() -> std::process::ExitCode {
    casebook_harness::suite::main(cuda_casebook::catalog())
}
