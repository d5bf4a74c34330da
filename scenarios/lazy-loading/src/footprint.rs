//! What lazy loading saves, and what it costs: a library of 1026 kernels,
//! of which the program uses one, is loaded in a worker under
//! CUDA_MODULE_LOADING=LAZY and in another under EAGER, in ten interleaved
//! pairs (after one not counted), so that what runs beside the trial
//! stretches both sides of a pair alike (`casebook_model::timing`). Each
//! worker records
//! the time the load takes, the time of the used kernel's first and second
//! launch, and the device and host memory the process gained by the time
//! the program has run.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use casebook_driver::{RecordSteps, device};
use casebook_model::{MeasureName, Outcome, Recorder, Termination, timing};
use casebook_runtime::worker;
use cudarc::driver::{result, sys};

use crate::names::*;

const LAZY_ROLE: &str = "the library loaded under CUDA_MODULE_LOADING=LAZY";
const EAGER_ROLE: &str = "the library loaded under CUDA_MODULE_LOADING=EAGER";

/// The figures one worker records, under its mode's names.
struct Figures {
    load: MeasureName,
    device: MeasureName,
    host: MeasureName,
    first_launch: MeasureName,
    second_launch: MeasureName,
}

const LAZY: Figures = Figures {
    load: LAZY_LOAD_SECONDS,
    device: LAZY_DEVICE_BYTES,
    host: LAZY_HOST_BYTES,
    first_launch: LAZY_FIRST_LAUNCH_SECONDS,
    second_launch: LAZY_SECOND_LAUNCH_SECONDS,
};

const EAGER: Figures = Figures {
    load: EAGER_LOAD_SECONDS,
    device: EAGER_DEVICE_BYTES,
    host: EAGER_HOST_BYTES,
    first_launch: EAGER_FIRST_LAUNCH_SECONDS,
    second_launch: EAGER_SECOND_LAUNCH_SECONDS,
};

/// Elements the used kernel runs over.
const ELEMENTS: usize = 1 << 20;

/// Interleaved pairs of workers, LAZY then EAGER: a neighbour that slows
/// the machine for a while slows both sides of a pair. Ten, of which
/// eight must agree ([`timing::AGREEING_SHARE`]): with five, one slow
/// worker on a slower host turned a start 1.4 times longer under EAGER
/// (medians 56 and 40 ms) into "about the same".
const PAIRS: usize = 10;
/// Pairs run first and not counted: the first worker of a run finds the
/// library's image and the driver cold, and it is always a LAZY one.
const WARM_UP: usize = 1;

/// The library a program loads: its image, and the load's step.
pub(crate) struct Library {
    image: &'static [u8],
    load: &'static str,
}

/// 1026 kernels, of which the program uses one.
const MANY: Library = Library {
    image: crate::fatbin::LIBRARY,
    load: "cuLibraryLoadData (1026 kernels)",
};

/// The kernel the program uses, alone.
const USED_ONLY: Library = Library {
    image: crate::fatbin::LIBRARY_USED_ONLY,
    load: "cuLibraryLoadData (the used kernel alone)",
};

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    footprint(rec, &MANY)
}

// ANCHOR: one_kernel
/// The control of what lazy loading saves: the same program, its library
/// holding nothing but the kernel it uses, so that there is nothing to
/// leave unloaded.
pub fn one_kernel(rec: &mut Recorder) -> anyhow::Result<()> {
    footprint(rec, &USED_ONLY)
}
// ANCHOR_END: one_kernel

fn footprint(rec: &mut Recorder, library: &Library) -> anyhow::Result<()> {
    match worker::role().as_deref() {
        Some(LAZY_ROLE) => return measure(rec, &LAZY, library),
        Some(EAGER_ROLE) => return measure(rec, &EAGER, library),
        _ => {}
    }
    let mut pairs: Vec<(Outcome, Outcome)> = Vec::new();
    for round in 0..WARM_UP + PAIRS {
        let mut pair = Vec::new();
        for (role, mode) in [(LAZY_ROLE, "LAZY"), (EAGER_ROLE, "EAGER")] {
            let outcome = worker::run_replayed(
                rec,
                role,
                Duration::from_secs(60),
                &[("CUDA_MODULE_LOADING", mode)],
            )?;
            if outcome.termination != Termination::Completed {
                // Without both workers' figures there is nothing to compare.
                anyhow::bail!(
                    "{role}: {}",
                    outcome
                        .error
                        .clone()
                        .unwrap_or_else(|| outcome.termination.to_string())
                );
            }
            pair.push(outcome);
        }
        let eager = pair.pop().expect("two workers");
        let lazy = pair.pop().expect("two workers");
        if round >= WARM_UP {
            pairs.push((lazy, eager));
        }
    }
    // Each figure's median over the workers of its mode.
    for figures in [&LAZY, &EAGER] {
        for name in figures.all() {
            let values: Vec<f64> = pairs
                .iter()
                .flat_map(|(l, e)| [l.measure(name), e.measure(name)])
                .flatten()
                .collect();
            if !values.is_empty() {
                rec.measure(name, timing::median(&values));
            }
        }
    }
    let compare = |rec: &mut Recorder, fact, at_lazy: MeasureName, at_eager, least, ratio| {
        let words = match at_lazy.unit {
            casebook_model::Unit::Seconds => ["longer", "shorter"],
            _ => ["more", "less"],
        };
        let figures: Vec<(f64, f64)> = pairs
            .iter()
            .filter_map(|(l, e)| Some((e.measure(at_eager)?, l.measure(at_lazy)?)))
            .collect();
        if figures.len() == pairs.len() {
            rec.fact(fact, compared(&figures, least, ratio, words));
        }
    };
    let (page, mib) = (device::PAGE as f64, (1 << 20) as f64);
    // The time to start: the load and the used kernel's first launch. Lazy
    // loading moves the used kernel's load from the one to the other; what
    // it can save is the load of the kernels never launched. (The load
    // alone is no measure of that: with the used kernel alone, EAGER's load
    // took 2 to 3 ms against LAZY's 0.2, and LAZY paid about as much at the
    // first launch, so the load alone fell on either side of its margin
    // from one full run to the next.)
    let starts: Vec<(f64, f64)> = pairs
        .iter()
        .filter_map(|(l, e)| Some((start(e, &EAGER)?, start(l, &LAZY)?)))
        .collect();
    if starts.len() == pairs.len() {
        let median = |side: fn(&(f64, f64)) -> f64| {
            timing::median(&starts.iter().map(side).collect::<Vec<_>>())
        };
        rec.measure(EAGER_START_SECONDS, median(|p| p.0));
        rec.measure(LAZY_START_SECONDS, median(|p| p.1));
        rec.fact(
            START_TIME,
            compared(&starts, START_LEAST, START_RATIO, ["longer", "shorter"]),
        );
    }
    compare(rec, DEVICE_MEMORY, LAZY.device, EAGER.device, page, 1.0);
    compare(rec, HOST_MEMORY, LAZY.host, EAGER.host, 4.0 * mib, 1.0);
    // LAZY's first launch loads the kernel (a millisecond or more on an
    // H100); EAGER's is a launch (tens of microseconds).
    compare(
        rec,
        FIRST_LAUNCH,
        LAZY.first_launch,
        EAGER.first_launch,
        2e-4,
        1.2,
    );
    Ok(())
}

/// The margin and factor by which one mode's start must be the longer:
/// 2 ms and a fifth. The 1026-kernel library's start was 13 to 17 ms longer
/// under EAGER (a factor of 1.4 to 1.5), the used kernel alone's within
/// 0.1 to 0.9 ms, in three full runs on an H100.
pub(crate) const START_LEAST: f64 = 2e-3;
pub(crate) const START_RATIO: f64 = 1.2;

/// A worker's start: its library's load and the used kernel's first launch.
fn start(o: &Outcome, figures: &Figures) -> Option<f64> {
    Some(o.measure(figures.load)? + o.measure(figures.first_launch)?)
}

impl Figures {
    fn all(&self) -> [MeasureName; 5] {
        [
            self.load,
            self.device,
            self.host,
            self.first_launch,
            self.second_launch,
        ]
    }
}

/// How a figure under EAGER compares with the same under LAZY over the
/// interleaved pairs `(eager, lazy)`, in words: "<more> under EAGER" when
/// it is larger by at least `least` and by at least the factor `ratio`
/// ([`timing::compare_pairs`]), "<less> under EAGER" the other way round,
/// and "about the same" between. Memory takes a margin alone (one NVML page
/// on the device, 4 MiB of resident host memory: the readings repeat to
/// within kilobytes); times, which other processes on the machine stretch,
/// take a margin and a fifth.
pub(crate) fn compared(pairs: &[(f64, f64)], least: f64, ratio: f64, words: [&str; 2]) -> String {
    match timing::compare_pairs(pairs, least, ratio).larger {
        timing::Larger::A => format!("{} under EAGER", words[0]),
        timing::Larger::B => format!("{} under EAGER", words[1]),
        timing::Larger::Neither => "about the same".to_owned(),
    }
}

/// One worker. The context and the kernel's buffer come first (they cost
/// the same under both modes); then the library is loaded and its one
/// used kernel launched twice; then the memory the process gained is
/// read. Only the first load is timed: it is the program's start. Loading
/// the same image again is no measure of it: on an H200, reloads of this
/// image, unloaded in between, took no longer under EAGER than under LAZY.
// ANCHOR: measure
fn measure(rec: &mut Recorder, figures: &Figures, library: &Library) -> anyhow::Result<()> {
    let _ctx = device::context(rec)?;
    crate::record_loading_mode(rec)?;
    // SAFETY: ELEMENTS floats, freed below; only the used kernel touches them.
    let x = rec.step("cuMemAlloc", unsafe { result::malloc_sync(ELEMENTS * 4) })?;
    // SAFETY: the buffer holds ELEMENTS words.
    rec.step("cuMemsetD32", unsafe {
        sys::cuMemsetD32_v2(x, 0, ELEMENTS).result()
    })?;
    let device_before = device::own_memory_bytes(rec)?;
    let host_before = device::resident_bytes();
    let start = Instant::now();
    let (_library, used) = crate::library_kernel(
        rec,
        library.image,
        library.load,
        "cuLibraryGetKernel (the one used)",
        c"casebook_library_used",
    )?;
    rec.measure(figures.load, start.elapsed().as_secs_f64());
    for (label, name) in [
        ("first", figures.first_launch),
        ("second", figures.second_launch),
    ] {
        let launched = launch(rec, used, x, label)?;
        rec.measure(name, launched.as_secs_f64());
    }
    let device_after = device::own_memory_bytes(rec)?;
    let host_after = device::resident_bytes();
    rec.measure(
        figures.device,
        device_after.saturating_sub(device_before) as f64,
    );
    rec.measure(figures.host, host_after.saturating_sub(host_before) as f64);
    // SAFETY: the stream is idle; nothing uses the buffer any more.
    rec.step("cuMemFree", unsafe { result::free_sync(x) })?;
    Ok(())
}
// ANCHOR_END: measure

/// Launches the used kernel over the buffer on the null stream, waits for
/// it, and returns how long the launch call took: under lazy loading, a
/// first launch loads the kernel inside that call.
fn launch(
    rec: &mut Recorder,
    kernel: sys::CUkernel,
    x: sys::CUdeviceptr,
    label: &str,
) -> anyhow::Result<Duration> {
    let (mut x, mut n) = (x, ELEMENTS as i32);
    let mut args = [
        (&mut x) as *mut _ as *mut c_void,
        (&mut n) as *mut _ as *mut c_void,
    ];
    let start = Instant::now();
    // SAFETY: the arguments match casebook_library_used(float *, int); a
    // CUkernel may be launched as a CUfunction of the current context.
    let launched = unsafe {
        result::launch_kernel(
            kernel as sys::CUfunction,
            ((ELEMENTS / 256) as u32, 1, 1),
            (256, 1, 1),
            0,
            std::ptr::null_mut(),
            &mut args,
        )
    };
    let took = start.elapsed();
    rec.step(&format!("cuLaunchKernel ({label} launch)"), launched)?;
    rec.step(
        &format!("cuCtxSynchronize ({label} launch)"),
        result::ctx::synchronize(),
    )?;
    Ok(took)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (EAGER, LAZY) starts, load plus first launch in seconds, as the
    /// medians of three full runs on an H100 recorded them.
    const MANY_STARTS: [(f64, f64); 3] =
        [(0.04767, 0.03167), (0.04898, 0.03269), (0.04769, 0.03455)];
    const ONE_KERNEL_STARTS: [(f64, f64); 3] =
        [(0.00315, 0.00306), (0.00206, 0.00168), (0.00197, 0.00113)];

    #[test]
    fn the_start_tells_the_library_of_many_from_the_kernel_alone() {
        let words = ["longer", "shorter"];
        assert_eq!(
            compared(&MANY_STARTS, START_LEAST, START_RATIO, words),
            "longer under EAGER"
        );
        assert_eq!(
            compared(&ONE_KERNEL_STARTS, START_LEAST, START_RATIO, words),
            "about the same"
        );
    }
}
