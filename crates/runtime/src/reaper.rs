//! Nothing a run starts outlives it. Each child is killed with its parent
//! (a parent-death signal, see [`crate::isolation`]), but what a child starts
//! in turn (a worker, a process PyTorch spawns) has no such signal. So the
//! first child started forks a reaper: a process that holds the read end of
//! a pipe whose write end only the harness holds. The harness tells it each
//! child's process group as it starts and ends; when the pipe closes (the
//! harness returned, crashed or was killed with SIGKILL), the reaper kills
//! every group still running, and exits.
//!
//! The reaper is forked from a process that may have other threads, so it
//! makes system calls only: no allocation, no lock.

use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::{Mutex, OnceLock};

/// The groups one reaper can track at once; more are not tracked.
const CAPACITY: usize = 4096;

static PIPE: OnceLock<Option<Mutex<File>>> = OnceLock::new();

fn pipe() -> Option<&'static Mutex<File>> {
    PIPE.get_or_init(|| match start() {
        Ok(file) => Some(Mutex::new(file)),
        Err(e) => {
            eprintln!(
                "warning: no reaper ({e}): processes a trial starts may outlive a killed run"
            );
            None
        }
    })
    .as_ref()
}

/// The reaper kills `group` (a child's process group) if the harness ends
/// before [`forget`] is called for it.
pub fn watch(group: u32) {
    send(group as i32);
}

/// `group` has ended: the reaper forgets it.
pub fn forget(group: u32) {
    send(-(group as i32));
}

fn send(word: i32) {
    if let Some(pipe) = pipe() {
        let mut file = pipe.lock().unwrap_or_else(|e| e.into_inner());
        // Four bytes: one atomic write on a pipe.
        let _ = file.write_all(&word.to_ne_bytes());
    }
}

/// Forks the reaper; returns the write end of its pipe.
fn start() -> std::io::Result<File> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: plain syscall on a local array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let [read, write] = fds;
    // SAFETY: the child runs `reap` only, which makes system calls and
    // touches its own stack; it never returns.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => unsafe { reap(read) },
        _ => {
            // SAFETY: `read` is ours and is closed once; `write` is owned
            // by the returned File from here on.
            unsafe { libc::close(read) };
            Ok(unsafe { File::from_raw_fd(write) })
        }
    }
}

/// The reaper's life: collect groups until the pipe closes, then kill them.
///
/// # Safety
/// Call only in a freshly forked child, with `read` the pipe's read end.
unsafe fn reap(read: RawFd) -> ! {
    unsafe {
        // Its own group, so a Ctrl-C meant for the harness does not stop
        // it; a hang-up neither.
        libc::setpgid(0, 0);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::prctl(
            libc::PR_SET_NAME,
            c"casebook-reaper".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
        // Every other descriptor the harness had open (a child's pipe, say)
        // would be kept open by this process: close them all.
        close_all_but(read);
        let mut groups = [0i32; CAPACITY];
        let mut bytes = [0u8; 4];
        let mut have = 0usize;
        loop {
            let n = libc::read(
                read,
                bytes.as_mut_ptr().add(have).cast(),
                bytes.len() - have,
            );
            if n == 0 {
                break;
            }
            if n < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            have += n as usize;
            if have < bytes.len() {
                continue;
            }
            have = 0;
            let word = i32::from_ne_bytes(bytes);
            if word > 0 {
                if let Some(slot) = groups.iter_mut().find(|g| **g == 0) {
                    *slot = word;
                }
            } else if let Some(slot) = groups.iter_mut().find(|g| **g == -word) {
                *slot = 0;
            }
        }
        for &group in groups.iter().filter(|g| **g > 0) {
            libc::kill(-group, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}

/// Closes every descriptor from 3 up except `keep`.
///
/// # Safety
/// Only in the forked reaper, which owns nothing else.
unsafe fn close_all_but(keep: RawFd) {
    unsafe {
        let close_range = |first: RawFd, last: libc::c_uint| {
            libc::syscall(libc::SYS_close_range, first as libc::c_uint, last, 0) == 0
        };
        let done = (keep <= 3 || close_range(3, (keep - 1) as libc::c_uint))
            && close_range(keep + 1, libc::c_uint::MAX);
        if !done {
            let limit = match libc::sysconf(libc::_SC_OPEN_MAX) {
                n if n > 0 => n.min(1 << 20) as RawFd,
                _ => 1024,
            };
            for fd in (3..limit).filter(|&fd| fd != keep) {
                libc::close(fd);
            }
        }
    }
}
