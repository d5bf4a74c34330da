//! The claims of the seed articles that no scenario decides, each with the
//! reason. With the claims the scenarios declare, this is the whole ledger
//! (`docs/claims.json`, generated); a suite trial checks every quote against
//! the seed files.

use casebook_model::ledger::{Undecided, Why::*};

const S000: &str = "000_1633914ffce0e075.txt";
const S001: &str = "001_eb72388bf55c7443.txt";
const S002: &str = "002_245404227877bbf6.txt";
const S003: &str = "003_a513a38b5daed103.txt";
const S004: &str = "004_dd8d91b458147886.txt";

pub const UNDECIDED: &[Undecided] = &[
    Undecided {
        id: "000-open-streams-interfere",
        seed: S000,
        quote: "Similarly, leaving open CUDA streams can interfere with subsequent operations.",
        why: NotYetTested("a scenario that leaves streams open across calls"),
    },
    Undecided {
        id: "000-device-sync-waits-for-all",
        seed: S000,
        quote: "This emphasizes the necessity for correctly using synchronization primitives like \
                `cudaDeviceSynchronize()`, which ensures the GPU completes all pending operations before the CPU proceeds.",
        why: NotYetTested(
            "unsynced-stream with cudaDeviceSynchronize as the fix (it uses the stream's own)",
        ),
    },
    Undecided {
        id: "000-reset-completely-resets",
        seed: S000,
        quote: "`cudaDeviceReset()` should be used cautiously; it completely resets the entire CUDA context on the device.",
        why: NotYetTested(
            "a scenario that measures what a reset releases (seed 002's `cudaDeviceReset()` example)",
        ),
    },
    Undecided {
        id: "000-check-every-call",
        seed: S000,
        quote: "Pay close attention to error checking after every CUDA API call.",
        why: Untestable(
            "advice, not a statement of what CUDA does (late-error shows what checking after a launch buys)",
        ),
    },
    Undecided {
        id: "001-tensorflow-session-cleanup",
        seed: S001,
        quote: "Proper resource cleanup through TensorFlow's session management or using context managers is essential.",
        why: Untestable("TensorFlow-only behaviour; the project runs CUDA through Rust and C++"),
    },
    Undecided {
        id: "001-second-run-cudnn-errors",
        seed: S001,
        quote: "This frequently leads to errors related to memory allocation, device synchronization, or improper handle \
                management, ultimately manifesting as cuDNN errors.",
        why: Untestable(
            "cuDNN is not among the libraries the project loads; its handle leak is shown with cuBLAS",
        ),
    },
    Undecided {
        id: "001-check-every-call",
        seed: S001,
        quote: "Proper error checking after every CUDA call (including `cudaMalloc`, `cudaFree`, and kernel launches) and \
                rigorous memory management are essential to avoid this.",
        why: Untestable("advice, not a statement of what CUDA does"),
    },
    Undecided {
        id: "002-free-null-and-reset-do-not-release",
        seed: S002,
        quote: "Simply calling `cudaFree(nullptr)` or `cudaDeviceReset()` does not guarantee the release of all allocated resources.",
        why: NotYetTested("a scenario that measures free memory before and after cudaDeviceReset"),
    },
    Undecided {
        id: "002-driver-reset-last-resort",
        seed: S002,
        quote: "As a last resort, a complete CUDA driver reset might be necessary to purge lingering resources.",
        why: Untestable("resetting the driver of a shared GPU machine is not allowed here"),
    },
    Undecided {
        id: "002-update-drivers",
        seed: S002,
        quote: "Updating to the latest drivers from the NVIDIA website is a frequently overlooked but crucial step in resolution.",
        why: Untestable(
            "the GPU machines have one driver (580); no other can be installed to compare",
        ),
    },
    Undecided {
        id: "003-reset-only-reclaims-runtime-memory",
        seed: S003,
        quote: "Clearing the cache using functions like `cudaFree(0)` or `cudaDeviceReset()` only reclaims memory that is \
                directly managed by the CUDA runtime.",
        why: NotYetTested("a scenario that measures what cudaDeviceReset reclaims"),
    },
    Undecided {
        id: "003-old-drivers",
        seed: S003,
        quote: "Older or improperly configured drivers might not effectively manage memory resources, particularly when \
                dealing with advanced features or intricate kernel launches.",
        why: Untestable("one driver version is available here"),
    },
    Undecided {
        id: "003-large-launch-memory-pressure",
        seed: S003,
        quote: "The kernel launch uses a large number of threads and blocks, further adding memory pressure for registers and \
                shared memory.",
        why: NotYetTested(
            "a scenario that measures free device memory around launches of growing grids",
        ),
    },
    Undecided {
        id: "004-in-kernel-allocation-fragments",
        seed: S004,
        quote: "Furthermore, memory allocation within multithreaded CUDA kernels itself can exacerbate this situation, \
                introducing more allocations that contribute to fragmented memory.",
        why: NotYetTested(
            "a device-heap-exhaustion variant that measures cudaMalloc space around in-kernel allocation",
        ),
    },
];

/// (untestable, not yet tested) among [`UNDECIDED`].
pub fn counts() -> (usize, usize) {
    use casebook_model::ledger::Why;
    let untestable = UNDECIDED
        .iter()
        .filter(|u| matches!(u.why, Why::Untestable(_)))
        .count();
    (untestable, UNDECIDED.len() - untestable)
}
