//! One run at a time on each GPU: `run-all`, `sanitize`, `bench` and
//! `reproduce` take an exclusive lock on a file per GPU they use (by its
//! UUID) before they touch it, so runs pinned to different GPUs of one host
//! (`CUDA_VISIBLE_DEVICES=0` and `=1`, the shards of a partitioned run) go
//! side by side, and one that uses both waits for each. A second run on a
//! GPU says who holds it and waits.
//!
//! The snapshot suite's trials, each a process of its own under nextest,
//! share the GPU through a second lock, shared or exclusive per trial
//! ([`hold_gpu`]), so a trial that needs the whole GPU never runs beside
//! another.

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

/// The lock files for a run on `gpus`: `$CASEBOOK_LOCK` alone where it is
/// set, else `casebook-gpu-<UUID>.lock` in the system's temporary folder
/// for each GPU, in UUID order (so two runs never wait on each other), or
/// `casebook-gpu.lock` when the GPUs are not known.
pub fn paths(gpus: &[crate::gpus::Gpu]) -> Vec<PathBuf> {
    lock_paths(
        std::env::var_os(LOCK_ENV).map(PathBuf::from),
        &std::env::temp_dir(),
        gpus,
    )
}

/// [`paths`], with the override and the folder given.
fn lock_paths(
    over: Option<PathBuf>,
    dir: &std::path::Path,
    gpus: &[crate::gpus::Gpu],
) -> Vec<PathBuf> {
    if let Some(path) = over {
        return vec![path];
    }
    if gpus.is_empty() {
        return vec![dir.join("casebook-gpu.lock")];
    }
    let mut uuids: Vec<&str> = gpus.iter().map(|g| g.uuid.as_str()).collect();
    uuids.sort_unstable();
    uuids.dedup();
    uuids
        .into_iter()
        .map(|uuid| dir.join(format!("casebook-gpu-{uuid}.lock")))
        .collect()
}

/// Takes the locks of `gpus` for `what` (`run-all`, say), waiting for
/// whoever holds one and saying so once on stderr.
pub fn acquire(what: &str, gpus: &[crate::gpus::Gpu]) -> std::io::Result<Vec<GpuLock>> {
    paths(gpus)
        .iter()
        .map(|path| acquire_at(path, what))
        .collect()
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

/// The GPU, as the trials of one suite share it: a trial that must run
/// alone locks this file exclusively, the others shared, so an exclusive
/// one never shares the GPU. A file lock, not an in-process one, because
/// under nextest each trial is its own process; one file per set of
/// visible GPUs, so suites pinned to different GPUs do not wait on each
/// other.
pub fn share_lock_path() -> std::path::PathBuf {
    let gpus = std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "all".to_owned());
    let gpus: String = gpus
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    std::env::temp_dir().join(format!("casebook-suite-gpus-{gpus}.lock"))
}

/// Holds the GPU for one trial: alone (exclusively) or beside others.
pub fn hold_gpu(alone: bool) -> std::io::Result<std::fs::File> {
    hold_gpu_at(&share_lock_path(), alone)
}

/// [`hold_gpu`], with the lock file at `path`.
fn hold_gpu_at(path: &std::path::Path, alone: bool) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    if alone {
        file.lock()?;
    } else {
        file.lock_shared()?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpus::Gpu;

    fn gpu(index: u32, uuid: &str) -> Gpu {
        Gpu {
            index,
            uuid: uuid.to_owned(),
            name: "NVIDIA H200".to_owned(),
            memory_bytes: 150 << 30,
        }
    }

    #[test]
    fn each_gpu_has_its_own_lock_taken_in_uuid_order() {
        let dir = std::path::Path::new("/tmp");
        let paths = |gpus: &[Gpu]| lock_paths(None, dir, gpus);
        let zero = paths(&[gpu(0, "GPU-b")]);
        let one = paths(&[gpu(1, "GPU-a")]);
        assert_ne!(zero, one, "two GPUs share a lock");
        let both = paths(&[gpu(0, "GPU-b"), gpu(1, "GPU-a")]);
        assert_eq!(both, [one[0].clone(), zero[0].clone()]);
        assert_eq!(paths(&[]), [dir.join("casebook-gpu.lock")]);
        // The override is the one lock, whatever the GPUs.
        let over = PathBuf::from("/x/casebook.lock");
        assert_eq!(
            lock_paths(Some(over.clone()), dir, &[gpu(0, "GPU-b")]),
            [over]
        );
    }

    #[test]
    fn an_exclusive_trial_waits_for_shared_ones_and_they_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("share.lock");
        let other = || std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        // Two shared trials at once.
        let a = super::hold_gpu_at(&path, false).unwrap();
        let b = super::hold_gpu_at(&path, false).unwrap();
        assert!(matches!(other().try_lock(), Err(TryLockError::WouldBlock)));
        drop((a, b));
        // One alone: nothing else, shared or not.
        let alone = super::hold_gpu_at(&path, true).unwrap();
        assert!(matches!(
            other().try_lock_shared(),
            Err(TryLockError::WouldBlock)
        ));
        drop(alone);
        assert!(other().try_lock().is_ok());
    }
}
