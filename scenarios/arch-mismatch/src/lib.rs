//! `arch-mismatch`: the program's kernels were built for GPUs other than
//! the one it runs on. A module with machine code (SASS) for an older
//! architecture only, and no PTX, fails to load with "no kernel image is
//! available for execution on the device"; PTX written by a newer toolkit
//! than the driver fails with "the provided PTX was compiled with an
//! unsupported toolchain". Neither error corrupts the context: the next call
//! works. The fix builds machine code for each target architecture plus PTX
//! for the newest, which the driver compiles for a GPU the build never knew.

use std::sync::Arc;

use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use cudarc::driver::{CudaContext, CudaFunction, DriverError, LaunchConfig, PushKernelArg, sys};

mod broken;
mod fixed;
mod newer_ptx;
mod ptx_only;

casebook_model::case_modules!();

/// Elements the kernel scales.
const N: usize = 1 << 20;

casebook_model::scenario!(Scenario {
    title: "no kernel image is available for execution on the device",
    cause: "The module holds neither machine code for the GPU's architecture nor PTX the \
            driver can compile: it was built for another GPU (`-arch=sm_75` alone, say), or \
            its PTX comes from a toolkit newer than the driver. The error is returned where \
            the module is loaded (the driver API) or where the kernel is launched (the \
            runtime API), and it leaves the context usable.",
    fix: "Compile with -gencode for each target architecture plus PTX for the newest (e.g. \
          -gencode=arch=compute_90,code=[sm_90,compute_90]), so the driver runs matching machine \
          code or JIT-compiles the PTX. With a prebuilt library (a PyTorch wheel), install a \
          build whose architecture list holds your GPU's (torch.cuda.get_arch_list()); where \
          the driver refuses the PTX as too new, update the driver to the compiler's CUDA.",
    symptoms: &["no kernel image", "a kernel does not load"],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::NO_BINARY_FOR_GPU)),
        cpp_pair!(Symptom::cuda_error(runtime::NO_KERNEL_IMAGE_FOR_DEVICE)),
        Variant::broken(
            "newer-ptx",
            Symptom::cuda_error(driver::UNSUPPORTED_PTX_VERSION),
            cudarc!(newer_ptx),
        ),
        // Alone: its fact compares two load times.
        Variant::contrast_clean("ptx-only", cudarc!(ptx_only)).alone(),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "NVIDIA/nvidia-docker#1055",
        shows: "`cudaSuccess (48 vs. 0) no kernel image is available for execution on the device` \
                from Caffe in NVIDIA's DIGITS 17.10 container (CUDA 8.0); closed without a cause.",
    },
    Report {
        id: "zai-org/ChatGLM-6B#1347",
        shows: "`RuntimeError: CUDA Error: no kernel image is available for execution on the device` \
                from cuModuleLoadData on a Jetson Orin (compute capability 8.7): the shipped fatbin had \
                no code for 8.7, and rebuilding it with `-gencode arch=compute_87,code=sm_87` fixed it.",
    },
    Report {
        id: "filecoin-project/rust-gpu-tools#79",
        shows: "`Cuda(NoBinaryForGpu)` from Rust on a Tesla K80 (3.7): the fatbin's lowest target \
                was compute_52, so it held nothing the K80 could run; it ran on a V100.",
    },
    Report {
        id: "huggingface/candle#2498",
        shows: "`CUDA_ERROR_UNSUPPORTED_PTX_VERSION, \"the provided PTX was compiled with an \
                unsupported toolchain.\"` loading candle's kernels built on another machine; \
                building on the machine that runs them worked.",
    },
    Report {
        id: "chelsea0x3b/cudarc#434",
        shows: "the same `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` from cudarc's tests on a fresh A10 \
                machine with driver 570.148.08.",
    },
    Report {
        id: "ComputationalRadiationPhysics/cuda_memtest#31",
        shows: "`the provided PTX was compiled with an unsupported toolchain.`: the program was \
                built with CUDA 11.3 and run on an older driver (460.80).",
    },
    Report {
        id: "ingowald/pynari#6",
        shows: "`CUDA_ERROR_UNSUPPORTED_PTX_VERSION` with the JIT's log `Unsupported .version 8.5; \
                current version is '8.4'`: the module was built with a toolkit newer than the \
                user's driver.",
    },
];

const GUIDE: &str = "CUDA C++ Programming Guide";

static BINARY_COMPATIBILITY: Passage = Passage {
    document: GUIDE,
    section: "Binary Compatibility",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility",
    text: "Binary code is architecture-specific. A cubin object is generated using the compiler \
           option -code that specifies the targeted architecture: For example, compiling with \
           -code=sm_80 produces binary code for devices of compute capability 8.0. Binary \
           compatibility is guaranteed from one minor revision to the next one, but not from one \
           minor revision to the previous one or across major revisions. In other words, a cubin \
           object generated for compute capability X.y will only execute on devices of compute \
           capability X.z where z≥y.",
};

static JUST_IN_TIME: Passage = Passage {
    document: GUIDE,
    section: "Just-in-Time Compilation",
    url: "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#just-in-time-compilation",
    text: "Any PTX code loaded by an application at runtime is compiled further to binary code by \
           the device driver. This is called just-in-time compilation.",
};

static PTX_ON_OLDER_DRIVERS: Passage = Passage {
    document: "CUDA Compatibility",
    section: "Application Considerations for Minor Version Compatibility",
    url: "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
    text: "Applications using PTX will see runtime issues. Applications that compile device code \
           to PTX will not work on older drivers. If the application requires PTX then \
           administrators have to upgrade the installed driver.",
};

pub(crate) use casebook_driver::device::message;

/// After the failed load: an unrelated call, allocating and freeing 1 MiB.
pub(crate) fn later_call(rec: &mut Recorder) {
    let ok = casebook_driver::device::unrelated_call(rec, "later call");
    rec.fact(names::LATER_CALL, ok.is_ok());
}

/// cuDriverGetVersion, as (major, minor): (13, 0).
pub(crate) fn driver_version(rec: &mut Recorder) -> Result<(i32, i32), DriverError> {
    let mut version = 0;
    rec.step(
        "cuDriverGetVersion",
        unsafe { sys::cuDriverGetVersion(&mut version) }.result(),
    )?;
    Ok((version / 1000, version % 1000 / 10))
}

/// Whether the Programming Guide's rule lets a cubin for compute
/// capability 7.5 run on this device: it is of compute capability 7.z, z ≥ 5.
pub(crate) fn rule_lets_sm75_run(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
) -> Result<bool, DriverError> {
    let (major, minor) = rec.step(
        "cuDeviceGetAttribute (compute capability)",
        ctx.compute_capability(),
    )?;
    Ok(major == 7 && minor >= 5)
}

/// The `.version` line of a PTX text: `9.1`.
pub(crate) fn isa_version(ptx: &str) -> String {
    ptx.lines()
        .find_map(|l| l.trim().strip_prefix(".version "))
        .unwrap_or("none")
        .trim()
        .to_owned()
}

/// Whether the loaded function's machine code is for the device's
/// compute capability (its binary version, major × 10 + minor).
pub(crate) fn machine_code_for_device(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    f: &CudaFunction,
) -> Result<bool, DriverError> {
    let (major, minor) = rec.step(
        "cuDeviceGetAttribute (compute capability)",
        ctx.compute_capability(),
    )?;
    let binary = rec.step(
        "cuFuncGetAttribute (binary version)",
        f.get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_BINARY_VERSION),
    )?;
    Ok(binary == major * 10 + minor)
}

/// Runs the kernel on N ones, doubling them, and checks every element.
pub(crate) fn scale_and_check(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    scale: &CudaFunction,
) -> Result<(), DriverError> {
    let stream = ctx.default_stream();
    let mut data = rec.step(
        "cuMemAlloc + cuMemcpyHtoD",
        stream.clone_htod(&vec![1.0f32; N]),
    )?;
    let n = N as i32;
    let mut launch = stream.launch_builder(scale);
    launch.arg(&mut data).arg(&n).arg(&2.0f32);
    rec.step("cuLaunchKernel scale", unsafe {
        launch.launch(LaunchConfig::for_num_elems(N as u32))
    })?;
    let out = rec.step("cuMemcpyDtoH", stream.clone_dtoh(&data))?;
    rec.check(names::SCALED, out.iter().all(|&x| x == 2.0));
    Ok(())
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-cubin-runs-only-on-same-major-newer-minor",
        source: Source::Nvidia(&BINARY_COMPATIBILITY),
        quote: "In other words, a cubin object generated for compute capability X.y will only \
                execute on devices of compute capability X.z where z≥y.",
        judged_by: "broken",
        control: Control::Impossible(
            "the judge compares the load with what the rule predicts, so reading \"refuted\" needs a driver that loads a cubin against the rule, and the machines have one driver (580). What shows that the load can come out either way here: a fatbin that carries machine code for the device's own architecture (sm_90, beside sm_80 and compute_90 PTX) loads (fixed), the cubin for 7.5 does not (this run).",
        ),
        // The module is a cubin for 7.5: the rule says whether it may run
        // on this device; the load says whether it did.
        judge: |o: &Outcome| match (o.flag(RULE_LETS_IT_RUN), o.flag(LOADED)) {
            (Some(allowed), Some(loaded)) => ClaimVerdict::confirmed_if(Some(allowed == loaded)),
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-driver-compiles-ptx-at-load",
        source: Source::Nvidia(&JUST_IN_TIME),
        quote: "Any PTX code loaded by an application at runtime is compiled further to binary \
                code by the device driver.",
        judged_by: "ptx-only",
        control: Control::Impossible(
            "PTX is never run as PTX: a run in which the driver loads it without compiling it to the device's machine code does not exist. What shows that the reading can tell: the machine code's architecture is read from the driver after the load, and loading the PTX takes longer than loading machine code for the device (both load times are among this run's figures).",
        ),
        // A module with PTX for 7.5 and no machine code: the function the
        // driver hands back either carries machine code for this device's
        // architecture, or it does not (or the load failed).
        judge: |o: &Outcome| ClaimVerdict::confirmed_if(o.flag(MACHINE_CODE_FOR_DEVICE)),
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-ptx-fails-on-older-drivers",
        source: Source::Nvidia(&PTX_ON_OLDER_DRIVERS),
        quote: "Applications that compile device code to PTX will not work on older drivers.",
        judged_by: "newer-ptx",
        control: Control::Impossible(
            "a run in which PTX from a newer toolkit (CUDA 13.1) loads would need a driver at least as new, and the machines have one driver (580, CUDA 13.0). What shows that the same load can succeed on this driver: PTX written by CUDA 13.0 loads (ptx-only).",
        ),
        // Only a driver older than the toolkit that wrote the PTX tests it.
        judge: |o: &Outcome| match o.flag(DRIVER_OLDER) {
            Some(true) => ClaimVerdict::refuted_if(o.flag(LOADED)),
            _ => ClaimVerdict::Undecided,
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_ptx_is_the_newer_toolkits_and_names_its_version() {
        assert_eq!(isa_version(newer_ptx::NEWER_PTX), "9.1");
        let (major, minor) = newer_ptx::WRITTEN_BY;
        assert!(
            newer_ptx::NEWER_PTX
                .contains(&format!("Cuda compilation tools, release {major}.{minor}"))
        );
        assert_eq!(isa_version("// no version here"), "none");
    }
}
