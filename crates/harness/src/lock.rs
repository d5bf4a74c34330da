//! One GPU run at a time: `run-all`, `sanitize`, `bench` and `reproduce`
//! take an exclusive lock on a file before they touch the GPU. A second run
//! says who holds it and waits.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

/// Overrides where the lock file lives.
pub const LOCK_ENV: &str = "CASEBOOK_LOCK";

/// Held for as long as it lives; the lock goes with the process, however
/// it ends.
pub struct GpuLock {
    _file: File,
}

/// The lock file: `$CASEBOOK_LOCK`, else `casebook-gpu.lock` in the
/// system's temporary folder (one per machine, as the GPU is).
pub fn path() -> PathBuf {
    std::env::var_os(LOCK_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("casebook-gpu.lock"))
}

/// Takes the lock for `what` (`run-all`, say), waiting for whoever holds
/// it and saying so once on stderr.
pub fn acquire(what: &str) -> std::io::Result<GpuLock> {
    acquire_at(&path(), what)
}

/// [`acquire`], with the lock file at `path`.
pub fn acquire_at(path: &std::path::Path, what: &str) -> std::io::Result<GpuLock> {
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            eprintln!(
                "waiting for the GPU: {} holds {}",
                if holder.is_empty() {
                    "another casebook run"
                } else {
                    holder
                },
                path.display()
            );
            file.lock()?;
        }
        Err(TryLockError::Error(e)) => return Err(e),
    }
    file.set_len(0)?;
    file.rewind()?;
    writeln!(
        file,
        "casebook {what} (pid {}, since {})",
        std::process::id(),
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    )?;
    Ok(GpuLock { _file: file })
}
