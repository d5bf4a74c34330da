//! The GPUs a run spreads its trials over: every GPU the process may see
//! (all of NVML's, or those `CUDA_VISIBLE_DEVICES` names), each child
//! pinned to one of them, or a pair trial's to two, through its own
//! `CUDA_VISIBLE_DEVICES`.

use nvml_wrapper::Nvml;

pub use casebook_report::Gpu;

/// What a child gets so that it sees `gpus` alone, in that order (the first
/// is its device 0); nothing where none is given (it inherits what the run
/// sees, unpinned).
pub fn pin(gpus: &[&Gpu]) -> Option<(String, String)> {
    (!gpus.is_empty()).then(|| {
        let uuids: Vec<&str> = gpus.iter().map(|g| g.uuid.as_str()).collect();
        ("CUDA_VISIBLE_DEVICES".to_owned(), uuids.join(","))
    })
}

/// The GPUs this process may use, in the order CUDA numbers them: NVML's
/// list, narrowed to what `visible` (the value of `CUDA_VISIBLE_DEVICES`,
/// if set) names. An entry CUDA would not understand ends the list there,
/// as it does for CUDA; a MIG instance cannot be pinned from NVML's list,
/// so with one the run uses what it inherits, unpinned (an empty list).
pub fn visible(nvml: &Nvml, visible: Option<&str>) -> Result<Vec<Gpu>, String> {
    let count = nvml.device_count().map_err(|e| format!("NVML: {e}"))?;
    let mut all = Vec::new();
    for index in 0..count {
        let device = nvml
            .device_by_index(index)
            .map_err(|e| format!("NVML: {e}"))?;
        all.push(Gpu {
            index,
            uuid: device.uuid().map_err(|e| format!("NVML: {e}"))?,
            name: device.name().unwrap_or_else(|_| "unknown GPU".to_owned()),
            memory_bytes: device.memory_info().map(|m| m.total).unwrap_or(0),
        });
    }
    Ok(select(&all, visible))
}

/// `all` narrowed to the entries of a `CUDA_VISIBLE_DEVICES` value.
pub fn select(all: &[Gpu], visible: Option<&str>) -> Vec<Gpu> {
    let Some(visible) = visible else {
        return all.to_vec();
    };
    let mut chosen: Vec<Gpu> = Vec::new();
    for entry in visible.split(',').map(str::trim) {
        let found = if entry.starts_with("MIG-") {
            return Vec::new();
        } else if let Ok(i) = entry.parse::<u32>() {
            all.get(i as usize)
        } else if entry.starts_with("GPU-") {
            let matches: Vec<&Gpu> = all.iter().filter(|g| g.uuid.starts_with(entry)).collect();
            // A prefix must name one GPU.
            (matches.len() == 1).then(|| matches[0])
        } else {
            None
        };
        match found {
            Some(gpu) if !chosen.contains(gpu) => chosen.push(gpu.clone()),
            Some(_) => {}
            None => break,
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus() -> Vec<Gpu> {
        (0..3)
            .map(|i| Gpu {
                index: i,
                uuid: format!("GPU-{i}aaa-uuid"),
                name: "H200".into(),
                memory_bytes: 150 << 30,
            })
            .collect()
    }

    #[test]
    fn without_the_variable_every_gpu_is_used() {
        assert_eq!(select(&gpus(), None), gpus());
    }

    #[test]
    fn indices_and_uuid_prefixes_choose_in_their_order() {
        let chosen = select(&gpus(), Some("2,GPU-0a"));
        assert_eq!(
            chosen.iter().map(|g| g.index).collect::<Vec<_>>(),
            vec![2, 0]
        );
    }

    #[test]
    fn an_entry_cuda_rejects_ends_the_list() {
        assert_eq!(select(&gpus(), Some("1,7,0")).len(), 1);
        assert!(select(&gpus(), Some("")).is_empty());
        // An ambiguous prefix names no GPU.
        assert!(select(&gpus(), Some("GPU-")).is_empty());
    }

    #[test]
    fn a_pair_is_pinned_in_its_order_and_reads_back_so() {
        let all = gpus();
        let (name, value) = pin(&[&all[2], &all[0]]).unwrap();
        assert_eq!(name, "CUDA_VISIBLE_DEVICES");
        assert_eq!(value, "GPU-2aaa-uuid,GPU-0aaa-uuid");
        // What the child is given is what CUDA would make of it.
        let seen: Vec<u32> = select(&all, Some(&value)).iter().map(|g| g.index).collect();
        assert_eq!(seen, [2, 0]);
        assert_eq!(pin(&[&all[1]]).unwrap().1, "GPU-1aaa-uuid");
        assert_eq!(pin(&[]), None);
    }

    #[test]
    fn mig_instances_are_not_pinned() {
        assert!(select(&gpus(), Some("MIG-abc")).is_empty());
    }
}
