//! The worker of the Rust variants: a forked child that does a small CUDA
//! job (fill a buffer on the device, read it back, add it up) and reports
//! each call's result to its parent over a pipe, one `call<TAB>result` line
//! each, stopping at the first failure. The parent records the lines as
//! steps of its own and waits for the child with a deadline, so a worker
//! that hangs is killed and named, not waited on for ever.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use casebook_driver::{RecordSteps, ResultName};
use casebook_model::Recorder;
use cudarc::driver::{DriverError, result, sys};

use crate::names::*;

/// The worker fills this many 32-bit words with [`FILL`]; their sum must be
/// `WORDS * FILL`.
pub const WORDS: usize = 1024;
pub const FILL: u32 = 7;
/// A worker still running after this long has hung: it is killed.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A result the worker reported by name.
#[derive(Debug)]
pub struct Reported(String);

impl ResultName for Reported {
    const SUCCESS: &'static str = "CUDA_SUCCESS";
    fn result_name(&self) -> String {
        self.0.clone()
    }
}

/// Forks. The child runs [`job`], writes its report into the pipe and
/// exits at once (`_exit`: none of the parent's destructors or CUDA's exit
/// handlers run in the copy). The parent records the report and how the
/// child ended.
pub fn fork_worker(rec: &mut Recorder) -> anyhow::Result<()> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        anyhow::bail!("pipe: {}", std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the child only runs `job`, writes to its pipe and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        anyhow::bail!("fork: {}", std::io::Error::last_os_error());
    }
    if pid == 0 {
        drop(read);
        let mut out = std::fs::File::from(write);
        job(&mut out);
        let _ = out.flush();
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::_exit(0) };
    }
    drop(write);
    rec.step("fork", Ok::<(), DriverError>(()))?;
    // The report is read on a thread: a worker that hangs never closes the pipe.
    let reader = std::thread::spawn(move || {
        BufReader::new(std::fs::File::from(read))
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    let ended = wait(pid);
    let lines = reader.join().unwrap_or_default();
    let mut sum = None;
    for line in &lines {
        match line.split_once('\t') {
            Some(("sum", value)) => sum = value.parse::<u64>().ok(),
            Some((call, "CUDA_SUCCESS")) => {
                let _ = rec.step(&format!("worker: {call}"), Ok::<(), Reported>(()));
            }
            Some((call, error)) => {
                let _ = rec.step(
                    &format!("worker: {call}"),
                    Err::<(), Reported>(Reported(error.to_owned())),
                );
            }
            None => {}
        }
    }
    rec.fact(WORKER_ENDED, ended);
    rec.check(WORKER_COMPUTED, sum == Some(WORDS as u64 * FILL as u64));
    Ok(())
}

/// Waits for the child until [`DEADLINE`], then kills it; says how it ended.
fn wait(pid: libc::pid_t) -> String {
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: `pid` is this process's child; `status` is a live local.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            return if libc::WIFEXITED(status) {
                format!("exited with status {}", libc::WEXITSTATUS(status))
            } else if libc::WIFSIGNALED(status) {
                format!("killed by signal {}", libc::WTERMSIG(status))
            } else {
                "ended".to_owned()
            };
        }
        if done < 0 {
            return format!("cannot be waited for: {}", std::io::Error::last_os_error());
        }
        if start.elapsed() > DEADLINE {
            // SAFETY: as above; the child is reaped right after.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return format!("hung: killed after {} s", DEADLINE.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The worker's job, each call reported as it returns; the first failure
/// ends it.
fn job(out: &mut impl Write) {
    let mut say = |call: &str, result: Result<(), DriverError>| {
        let name = match &result {
            Ok(()) => DriverError::SUCCESS.to_owned(),
            Err(e) => e.result_name(),
        };
        let _ = writeln!(out, "{call}\t{name}");
        result.is_ok()
    };
    macro_rules! call {
        ($name:literal, $e:expr) => {
            match $e {
                Ok(v) => {
                    say($name, Ok(()));
                    v
                }
                Err(e) => {
                    say($name, Err(e));
                    return;
                }
            }
        };
    }
    call!("cuInit", result::init());
    let dev = call!("cuDeviceGet", result::device::get(0));
    // SAFETY: plain driver calls on the device just got; the buffer is the
    // worker's own and freed before it reports.
    unsafe {
        let ctx = call!("cuDevicePrimaryCtxRetain", result::primary_ctx::retain(dev));
        call!("cuCtxSetCurrent", result::ctx::set_current(ctx));
        let buf = call!("cuMemAlloc", result::malloc_sync(WORDS * 4));
        call!(
            "cuMemsetD32",
            sys::cuMemsetD32_v2(buf, FILL, WORDS).result()
        );
        let mut host = vec![0u32; WORDS];
        call!("cuMemcpyDtoH", result::memcpy_dtoh_sync(&mut host, buf));
        call!("cuMemFree", result::free_sync(buf));
        let sum: u64 = host.iter().map(|&w| u64::from(w)).sum();
        let _ = writeln!(out, "sum\t{sum}");
    }
}
