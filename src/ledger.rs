//! The claims of the seed articles that no scenario decides, each with the
//! reason. With the claims the scenarios declare, this is the whole ledger
//! (`docs/claims.json`, generated); a suite trial checks every quote against
//! the seed files.

use casebook_model::ledger::{Undecided, Why::*};

const S000: &str = "000_1633914ffce0e075.txt";
const S001: &str = "001_eb72388bf55c7443.txt";
const S002: &str = "002_245404227877bbf6.txt";
const S003: &str = "003_a513a38b5daed103.txt";

pub const UNDECIDED: &[Undecided] = &[
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
        id: "003-old-drivers",
        seed: S003,
        quote: "Older or improperly configured drivers might not effectively manage memory resources, particularly when \
                dealing with advanced features or intricate kernel launches.",
        why: Untestable("one driver version is available here"),
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
