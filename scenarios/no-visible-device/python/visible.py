"""The job's script sets CUDA_VISIBLE_DEVICES itself before PyTorch starts
CUDA (`os.environ["CUDA_VISIBLE_DEVICES"] = "1"`, a shell script's
`export CUDA_VISIBLE_DEVICES=2`), naming a GPU the machine does not have:
here the index one past the machine's last GPU, as "1" is on a machine with
one GPU. CUDA then sees no GPU at all, and the first tensor on "cuda" raises
"No CUDA GPUs are available".

What to notice: the driver and the GPU are fine; the same script that takes
its GPU from the ones the launcher gave runs.
"""

import os

from casebook import names, visible_gpu_handles


def _launcher_gpus():
    """The GPUs the launcher gave this process, as it named them (the
    harness names one by UUID), or every index where it named none."""
    given = os.environ.get("CUDA_VISIBLE_DEVICES")
    if given:
        return [entry.strip() for entry in given.split(",")]
    return [str(i) for i in range(len(visible_gpu_handles()))]


def _machine_gpus():
    """How many GPUs the machine has, as nvidia-smi numbers them."""
    import pynvml  # nvidia-ml-py: on the GPU machines, beside torch

    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetCount()


def _run(rec):
    import torch  # after the variable is set, as the job's script does

    seen = torch.cuda.device_count()
    rec.measure(names.DEVICES_SEEN, seen)
    tried = rec.attempt(
        "torch.ones(4, device='cuda').sum()",
        lambda: torch.ones(4, device="cuda").sum().item(),
    )
    rec.check(names.RAN, tried.ok and tried.value == 4.0)


def broken(rec):
    machine = _machine_gpus()
    # ANCHOR: broken
    configured = machine  # the job's GPU from its configuration ("1" on one GPU)
    os.environ["CUDA_VISIBLE_DEVICES"] = str(configured)  # BUG: a GPU the machine does not have
    # ANCHOR_END: broken
    rec.fact(names.VISIBLE, "the index one past the machine's last GPU")
    _run(rec)


def fixed(rec):
    machine = _machine_gpus()
    launcher = _launcher_gpus()
    # ANCHOR: fixed
    configured = machine  # the same configuration as the broken script
    os.environ["CUDA_VISIBLE_DEVICES"] = launcher[configured % len(launcher)]  # FIX: a given GPU
    # ANCHOR_END: fixed
    rec.fact(names.VISIBLE, "a GPU the launcher gave")
    _run(rec)
