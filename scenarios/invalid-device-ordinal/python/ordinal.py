"""A job puts its model on `cuda:N`, N from its configuration (`cuda:1`,
a rank), and the process sees fewer GPUs: here N is one past the last GPU
the process sees, as `cuda:1` is on a machine with one GPU. PyTorch raises
"CUDA error: invalid device ordinal" at the first tensor on that device.

What to notice: nothing else is wrong; the same work on an ordinal the
process sees runs.
"""

import torch

from casebook import names


def _run(rec, ordinal):
    tried = rec.attempt(
        "torch.ones(4, device=f'cuda:{ordinal}').sum()",
        lambda: torch.ones(4, device=f"cuda:{ordinal}").sum().item(),
    )
    rec.check(names.RAN, tried.ok and tried.value == 4.0)


def _seen(rec):
    seen = torch.cuda.device_count()
    rec.measure(names.DEVICES_SEEN, seen)
    rec.fact(names.ORDINAL, "one past the last GPU the process sees")
    return seen


def broken(rec):
    seen = _seen(rec)
    # ANCHOR: broken
    ordinal = seen  # BUG: the GPU from the job's configuration (`cuda:1` on one GPU)
    _run(rec, ordinal)
    # ANCHOR_END: broken


def fixed(rec):
    seen = _seen(rec)
    # ANCHOR: fixed
    configured = seen  # the same configuration as the broken program
    ordinal = configured % seen  # FIX: an ordinal this process sees
    _run(rec, ordinal)
    # ANCHOR_END: fixed
