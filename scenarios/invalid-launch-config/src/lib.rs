//! `invalid-launch-config`: a kernel written the way many extensions are,
//! one block row per row of a batch (`blockIdx.y` is the row), works until
//! the batch has more than 65535 rows, the most block rows a grid may have;
//! an empty batch asks for a grid of zero rows. Either launch is refused
//! before anything runs: under CUDA 13.0 with "invalid argument"
//! (cudaErrorInvalidValue, CUDA_ERROR_INVALID_VALUE), where reports from
//! older CUDA show "invalid configuration argument". The context is not
//! touched, so an unchecked launch's error is reported by the check of the
//! next, valid launch. PyTorch's own flash-attention kernel puts the batch on
//! a grid dimension too. The fix: a fixed number of block rows striding over
//! the rows, no launch for an empty batch, and every launch checked.

use std::sync::Arc;

use casebook_driver::device;
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use casebook_model::pytorch;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};

mod broken;
mod fixed;

casebook_model::names_module!();

casebook_model::cpp_variants! {
    "cpp/invalid_launch_config.cu" {
        broken,
        fixed,
        empty_batch,
        unchecked,
    }
}

/// The kernels of `device/`, compiled by nvcc.
pub mod fatbin {
    include!(concat!(env!("OUT_DIR"), "/fatbins.rs"));
}

const ATTENTION: &str = "python/attention.py";

/// Columns of each row; the rows go on the grid's y dimension.
pub(crate) const COLS: u32 = 64;

pub fn scenario() -> Scenario {
    Scenario {
        slug: "invalid-launch-config",
        title: "invalid configuration argument (invalid argument under CUDA 13.0): a batch of more \
                than 65535 rows, or of none, on a grid dimension",
        cause: "A grid has at most 65535 blocks in its y and z dimensions (2^31 - 1 in x), and at \
                least one in each; a kernel that puts a batch's rows (or heads) on y or z fails to \
                launch once the batch passes 65535, or when it is empty. Nothing runs; the context \
                is unharmed, and an unchecked launch's error is reported by the next check.",
        fix: "Keep the grid's y and z at most 65535 and let each block stride over the rows (or put \
              the batch on x, or split it), skip the launch for an empty batch, and check every \
              launch with cudaGetLastError.",
        symptoms: &[
            "a kernel does not launch",
            "invalid configuration argument",
            "fails only with a large batch",
        ],
        requires: Requirement::GPU,
        reports: REPORTS,
        claims: CLAIMS,
        variants: variants![
            cudarc_pair!(Symptom::cuda_error(driver::INVALID_VALUE))
                .then_shows(Symptom::check_failed(RESULTS_RIGHT)),
            cpp_pair!(Symptom::cuda_error(runtime::INVALID_VALUE))
                .then_shows(Symptom::check_failed(RESULTS_RIGHT)),
            Variant::broken(
                "empty-batch-cpp",
                Symptom::cuda_error(runtime::INVALID_VALUE),
                cpp::empty_batch,
            ),
            Variant::broken(
                "unchecked-cpp",
                Symptom::cuda_error(runtime::INVALID_VALUE),
                cpp::unchecked,
            )
            .then_shows(Symptom::check_failed(RESULTS_RIGHT)),
            Variant::broken(
                "flash-attention-py",
                Symptom::cuda_error(pytorch::INVALID_ARGUMENT),
                Program::pytorch(ATTENTION, "broken"),
            )
            .also_differs(
                "PyTorch's own kernel, not an extension's: the flash-attention backend of \
                 scaled_dot_product_attention puts the batch on a grid dimension.",
            ),
            Variant::fixed(
                "flash-attention-split-py",
                Program::pytorch(ATTENTION, "fixed")
            ),
        ],
    }
}

const REPORTS: &[Report] = &[
    Report {
        id: "pytorch/pytorch#146704",
        shows: "scaled_dot_product_attention with the efficient or flash backend runs a batch of \
                2**16 - 1 and fails on 2**16 with `CUDA error: invalid configuration argument`.",
    },
    Report {
        id: "pytorch/pytorch#142228",
        shows: "The memory-efficient kernel's grid is (query blocks, heads, batch): a batch or a \
                number of heads above 65535 fails with `invalid configuration argument`.",
    },
    Report {
        id: "facebookresearch/xformers#845",
        shows: "xformers' memory_efficient_attention fails with `RuntimeError: CUDA error: invalid \
                configuration argument` for a batch of 65536 or more.",
    },
    Report {
        id: "flashinfer-ai/flashinfer#3125",
        shows: "The batch maps to the grid's z dimension; above 65535, cuLaunchKernelEx returns \
                CUDA_ERROR_INVALID_VALUE, and with no exception raised the results are wrong.",
    },
    Report {
        id: "harvardnlp/genbmm#12",
        shows: "`RuntimeError: CUDA error: invalid configuration argument` from a batched kernel given \
                100000 matrices; the reporter found it comes when the batch dimension is too large.",
    },
    Report {
        id: "Dao-AILab/flash-attention#1812",
        shows: "flash_attn_func on a tensor of 71280 heads fails with `CUDA error: invalid \
                configuration argument`; the variable-length entry point avoids it.",
    },
];

/// The program's input and output: [`broken::MAX_ROWS`] + 1 rows of
/// [`COLS`] floats, each element its column; the output filled with -1.
pub(crate) struct Rows {
    stream: Arc<CudaStream>,
    add_row: CudaFunction,
    add_row_strided: CudaFunction,
    input: CudaSlice<f32>,
    out: CudaSlice<f32>,
}

fn len(rows: u32) -> usize {
    rows as usize * COLS as usize
}

impl Rows {
    pub(crate) fn setup(rec: &mut Recorder) -> Result<Self, DriverError> {
        let ctx = device::context(rec)?;
        let add_row = device::kernel(rec, &ctx, fatbin::ROWS, "add_row")?;
        let add_row_strided = device::kernel(rec, &ctx, fatbin::ROWS, "add_row_strided")?;
        let stream = ctx.default_stream();
        let n = len(broken::MAX_ROWS + 1);
        let host: Vec<f32> = (0..n).map(|i| (i % COLS as usize) as f32).collect();
        let input = rec.step("cuMemAlloc + cuMemcpyHtoD (in)", stream.clone_htod(&host))?;
        let out = rec.step(
            "cuMemAlloc + cuMemcpyHtoD (out, -1)",
            stream.clone_htod(&vec![-1.0f32; n]),
        )?;
        Ok(Self {
            stream,
            add_row,
            add_row_strided,
            input,
            out,
        })
    }

    /// Whether the first `rows` rows hold their input plus their index.
    pub(crate) fn right(&self, rec: &mut Recorder, rows: u32) -> Result<bool, DriverError> {
        let got = rec.step("cuMemcpyDtoH (out)", self.stream.clone_dtoh(&self.out))?;
        Ok(got[..len(rows)]
            .iter()
            .enumerate()
            .all(|(i, &y)| y == (i % COLS as usize) as f32 + (i / COLS as usize) as f32))
    }
}

/// Launches `kernel` (`add_row` or `add_row_strided`) over `rows` rows on a
/// grid of `block_rows` block rows, and waits for it.
pub(crate) fn add_rows(
    rec: &mut Recorder,
    p: &Rows,
    kernel: &str,
    rows: u32,
    block_rows: u32,
) -> Result<(), DriverError> {
    let f = if kernel.ends_with("add_row_strided") {
        &p.add_row_strided
    } else {
        &p.add_row
    };
    let config = LaunchConfig {
        grid_dim: (1, block_rows, 1),
        block_dim: (COLS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (n_rows, cols) = (rows as i32, COLS as i32);
    let mut launch = p.stream.launch_builder(f);
    launch.arg(&p.out).arg(&p.input).arg(&n_rows).arg(&cols);
    // SAFETY: the kernel writes at most `rows` rows of COLS floats of `out`
    // and reads as many of `input`, both that long.
    rec.step(&format!("cuLaunchKernel {kernel} ({rows} rows)"), unsafe {
        launch.launch(config)
    })?;
    rec.step("cuStreamSynchronize", p.stream.synchronize())
}

pub(crate) use casebook_driver::device::message;

static GRID_LIMITS: Passage = Passage {
    document: "CUDA C++ Programming Guide",
    section: "Compute Capabilities: Technical Specifications per Compute Capability",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#features-and-technical-specifications",
    text: "Maximum y- or z-dimension of a grid of thread blocks: 65535",
};

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-grid-y-up-to-65535",
    source: Source::Nvidia(&GRID_LIMITS),
    quote: "Maximum y- or z-dimension of a grid of thread blocks: 65535",
    judged_by: "broken",
    control: Control::Impossible(
        "65535 block rows is the limit of every GPU the machines have (H100 and H200); a run that reads otherwise would need a GPU with another limit. The run reads both answers itself: the same kernel launches with 65535 block rows and is refused with 65536.",
    ),
    // Up to 65535: 65535 block rows run and 65536 are refused.
    judge: |o: &Outcome| match (o.flag(AT_LIMIT_RUNS), o.flag(OVER_LIMIT_RUNS)) {
        (Some(at), Some(over)) => ClaimVerdict::confirmed_if(Some(at && !over)),
        _ => ClaimVerdict::Undecided,
    },
    ..Claim::EITHER
}];
