//! The machine a run saw: its fingerprint and the GPUs it spread its
//! trials over.

use serde::{Deserialize, Serialize};

/// Which GPU, driver and toolkit a run saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// `NVIDIA H100 80GB HBM3`.
    pub gpu: String,
    /// The kernel driver's version, `580.159.04`.
    pub driver: String,
    /// The CUDA version the driver supports, `13.0`.
    pub cuda: String,
    /// The toolkit that compiled the kernels, `13.0.88`.
    pub toolkit: String,
    /// `9.0`.
    pub compute_capability: String,
    pub memory_total_bytes: u64,
    pub device_count: u32,
}

/// One GPU of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gpu {
    /// NVML's index (PCI order): what `nvidia-smi` shows.
    pub index: u32,
    pub uuid: String,
    pub name: String,
    /// Its device memory, as NVML counts it; 0 where unknown (a report from
    /// before this was recorded).
    #[serde(default)]
    pub memory_bytes: u64,
}

impl Gpu {
    /// `n` GPUs of 80 GiB that no machine has, for the tests of placement
    /// and scheduling. Their NVML indices start at 4, so that a test that
    /// takes an index for a position fails.
    pub fn test_gpus(n: u32) -> Vec<Gpu> {
        (0..n)
            .map(|index| Gpu {
                index: index + 4,
                uuid: format!("GPU-test-{index}"),
                name: "no such GPU".into(),
                memory_bytes: 80 << 30,
            })
            .collect()
    }
}

impl std::fmt::Display for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GPU {} ({})", self.index, self.name)
    }
}
