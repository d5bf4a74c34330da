//! `invalid-launch-config`: a kernel written the way many extensions are,
//! one block row per row of a batch (`blockIdx.y` is the row), works until
//! the batch has more than 65535 rows, the most block rows a grid may have;
//! an empty batch asks for a grid of zero rows. Either launch is refused
//! and writes nothing, with "invalid argument": CUDA_ERROR_INVALID_VALUE
//! from the driver API, and cudaErrorInvalidValue from the runtime of CUDA
//! 13.0, where the runtimes of the cited reports returned
//! cudaErrorInvalidConfiguration ("invalid configuration argument"); which
//! release changed it was not run here. The context is not touched: in the
//! runtime API, an unchecked launch's error is what the next
//! cudaGetLastError returns, after another kernel's valid launch. PyTorch
//! 2.11's flash-attention kernel puts the batch on a grid dimension too (its
//! efficient-attention kernel now takes the batch, and still refuses 65536
//! heads). The fix: a fixed number of block rows striding over the rows, no
//! launch for an empty batch, and every launch checked.

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

casebook_model::case_modules!();

const ATTENTION: &str = "python/attention.py";

/// Columns of each row; the rows go on the grid's y dimension.
pub(crate) const COLS: u32 = 64;

casebook_model::scenario!(Scenario {
    title: "invalid configuration argument (invalid argument under CUDA 13.0): a batch of more \
            than 65535 rows, or of none, on a grid dimension",
    cause: "A grid has at most 65535 blocks in its y and z dimensions (2^31 - 1 in x), and at \
            least one in each; a kernel that puts a batch's rows (or heads) on y or z fails to \
            launch once the batch passes 65535, or when it is empty: \"invalid argument\" \
            under CUDA 13.0, \"invalid configuration argument\" from the runtimes of older \
            reports. Nothing runs and the context is unharmed; unchecked, the error is what the \
            next cudaGetLastError returns.",
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
});

const REPORTS: &[Report] = &[
    Report {
        id: "pytorch/pytorch#146704",
        shows: "scaled_dot_product_attention with the efficient or flash backend runs a batch of \
                `2**16 - 1` and fails on `2**16` with `CUDA error: invalid configuration argument`.",
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
        shows: "flash_attn_func on q, k and v of shape [1, 3, 71280, 128] fails with `CUDA error: \
                invalid configuration argument`; the reporter avoided it with flash_attn_varlen_func. \
                No one in the thread names the cause: in flash_attn_func's (batch, seqlen, nheads, \
                headdim) layout that shape has 71280 heads.",
    },
];

/// The program's input and output: [`broken::MAX_ROWS`] + 1 rows of
/// [`COLS`] floats, each element its column; the output filled with -1.
pub(crate) struct Rows {
    stream: Arc<CudaStream>,
    add_row: CudaFunction,
    add_row_strided: CudaFunction,
    add_row_z: CudaFunction,
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
        let add_row_z = device::kernel(rec, &ctx, fatbin::ROWS, "add_row_z")?;
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
            add_row_z,
            input,
            out,
        })
    }

    /// Fills the output with -1 again, so that what a launch writes is told
    /// from what an earlier one left.
    pub(crate) fn clear(&mut self, rec: &mut Recorder) -> Result<(), DriverError> {
        let unset = vec![-1.0f32; self.out.len()];
        rec.step(
            "cuMemcpyHtoD (out, -1)",
            self.stream.memcpy_htod(&unset, &mut self.out),
        )
    }

    /// The first `rows` rows of the output.
    fn read(&self, rec: &mut Recorder, rows: u32) -> Result<Vec<f32>, DriverError> {
        let mut got = rec.step("cuMemcpyDtoH (out)", self.stream.clone_dtoh(&self.out))?;
        got.truncate(len(rows));
        Ok(got)
    }

    /// Whether the first `rows` rows of the output still hold the -1 they
    /// were filled with: no kernel wrote them.
    pub(crate) fn untouched(&self, rec: &mut Recorder, rows: u32) -> Result<bool, DriverError> {
        Ok(self.read(rec, rows)?.iter().all(|&y| y == -1.0))
    }

    /// Whether the first `rows` rows hold their input plus their index.
    pub(crate) fn right(&self, rec: &mut Recorder, rows: u32) -> Result<bool, DriverError> {
        Ok(self
            .read(rec, rows)?
            .iter()
            .enumerate()
            .all(|(i, &y)| y == (i % COLS as usize) as f32 + (i / COLS as usize) as f32))
    }
}

/// The kernels of `device/rows.cu`.
#[derive(Clone, Copy)]
pub(crate) enum Kernel {
    /// One block row per row: the row is blockIdx.y.
    Row,
    /// At most 65535 block rows, each striding over the rows.
    Strided,
    /// One block per row on the grid's z dimension: the row is blockIdx.z.
    RowZ,
}

impl Kernel {
    fn name(self) -> &'static str {
        match self {
            Kernel::Row => "add_row",
            Kernel::Strided => "add_row_strided",
            Kernel::RowZ => "add_row_z",
        }
    }
}

/// Launches `kernel` over `rows` rows on a grid of `block_rows` block rows
/// (in z for [`Kernel::RowZ`], in y for the others), and waits for it.
/// `later`: a launch after the one the variant is about, so labelled.
pub(crate) fn add_rows(
    rec: &mut Recorder,
    p: &Rows,
    kernel: Kernel,
    rows: u32,
    block_rows: u32,
    later: bool,
) -> Result<(), DriverError> {
    let (f, grid_dim) = match kernel {
        Kernel::Row => (&p.add_row, (1, block_rows, 1)),
        Kernel::Strided => (&p.add_row_strided, (1, block_rows, 1)),
        Kernel::RowZ => (&p.add_row_z, (1, 1, block_rows)),
    };
    let config = LaunchConfig {
        grid_dim,
        block_dim: (COLS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (n_rows, cols) = (rows as i32, COLS as i32);
    let mut launch = p.stream.launch_builder(f);
    launch.arg(&p.out).arg(&p.input).arg(&n_rows).arg(&cols);
    let when = if later { "later: " } else { "" };
    // SAFETY: the kernel writes at most `rows` rows of COLS floats of `out`
    // and reads as many of `input`, both that long.
    rec.step(
        &format!("{when}cuLaunchKernel {} ({rows} rows)", kernel.name()),
        unsafe { launch.launch(config) },
    )?;
    rec.step("cuStreamSynchronize", p.stream.synchronize())
}

pub(crate) use casebook_driver::device::message;

// A row of NVIDIA's table and its cell, joined by a colon.
static GRID_LIMITS: Passage = Passage {
    document: "CUDA C++ Programming Guide",
    section: "Compute Capabilities: Technical Specifications per Compute Capability (a row and its value)",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#features-and-technical-specifications",
    text: "Maximum y- or z-dimension of a grid of thread blocks: 65535",
};

const CLAIMS: &[Claim] = &[Claim {
    id: "nvidia-grid-y-up-to-65535",
    source: Source::Nvidia(&GRID_LIMITS),
    quote: "Maximum y- or z-dimension of a grid of thread blocks: 65535",
    judged_by: "broken",
    control: Control::Impossible(
        "65535 blocks in y and in z is the limit of every compute capability NVIDIA's table lists, 9.0 (the H100 this ran on) among them; a run that reads otherwise would need a GPU with another limit. The run reads both answers itself, in each dimension: the same kernel launches with 65535 blocks there and is refused with 65536.",
    ),
    // Up to 65535 in y and in z: 65535 blocks run and 65536 are refused,
    // in each dimension (the kernel indexes its row by blockIdx.y, or by
    // blockIdx.z); either dimension reading otherwise refutes it.
    judge: |o: &Outcome| {
        let up_to = |at: casebook_model::FactName, over: casebook_model::FactName| match (
            o.flag(at),
            o.flag(over),
        ) {
            (Some(at), Some(over)) => Some(at && !over),
            _ => None,
        };
        ClaimVerdict::confirmed_if_all([
            up_to(AT_LIMIT_RUNS, OVER_LIMIT_RUNS),
            up_to(Z_AT_LIMIT_RUNS, Z_OVER_LIMIT_RUNS),
        ])
    },
    ..Claim::EITHER
}];
