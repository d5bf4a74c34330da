"""Seed 003: "carefully consider the memory requirements of all libraries
and dependencies used in your project, as these can significantly
contribute to overall memory consumption."

A PyTorch model at batch size 1, the article's case, takes one step: a
linear layer's matrix product (cuBLAS) and a convolution (cuDNN). The
device memory the process holds, as NVML counts it (its context, the
kernels loaded, PyTorch's pool), is read before the step and after it.
What the step adds beyond its results is what the libraries take at their
first call: handles, workspaces, their kernels. The judge reads it as a
share of everything the process holds after the step.

What to notice: the control, large_batch, is the same step at a batch of
262,144, whose data is gigabytes; both check a slice of the results
against the CPU's.
"""

import os

import torch

from casebook import contexts_by_device, names

LARGE_BATCH = 1 << 18  # the control's batch: 3 GiB of images, 7 GiB of feature maps


def _held():
    """This process's device memory on its GPU, as NVML counts it (0 where
    NVML cannot say)."""
    torch.cuda.synchronize()
    return contexts_by_device([os.getpid()])[os.getpid()].get(0, 0)


def _footprint(rec, batch):
    torch.manual_seed(0)
    w = torch.randn(256, 256, device="cuda")
    conv = torch.nn.Conv2d(3, 8, 3).cuda()
    x = torch.randn(batch, 256, device="cuda")
    img = torch.randn(batch, 3, 32, 32, device="cuda")
    before = _held()
    with torch.no_grad():
        y, z = rec.step("the model's step", lambda: (x @ w, conv(img)))
        after = _held()
        cpu = conv.cpu()
        right = torch.allclose(
            y[:4].cpu(), x[:4].cpu() @ w.cpu(), rtol=1e-2, atol=1e-2
        ) and torch.allclose(z[:4].cpu(), cpu(img[:4].cpu()), rtol=1e-2, atol=1e-2)
    rec.check(names.STEP_RIGHT, right)
    if before == 0 or after == 0:
        rec.fact(names.PROCESS_MEMORY_READ, "NVML gives no figure for this process")
        return
    results = y.nbytes + z.nbytes
    rec.measure(names.PROCESS_BYTES_BEFORE_THE_STEP, before)
    rec.measure(names.BYTES_THE_STEP_ADDS, after - before)
    rec.measure(names.BYTES_OF_THE_STEP_S_RESULTS, results)
    rec.measure(names.LIBRARIES_SHARE_OF_PROCESS_MEMORY, (after - before - results) / after)


# ANCHOR: library
def library(rec):
    _footprint(rec, batch=1)  # the article's case: batch size 1
    # ANCHOR_END: library


# ANCHOR: large_batch
def large_batch(rec):
    _footprint(rec, batch=LARGE_BATCH)  # the control: data of gigabytes
    # ANCHOR_END: large_batch
