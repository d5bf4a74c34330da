"""Seed 003: "carefully consider the memory requirements of all libraries
and dependencies used in your project, as these can significantly
contribute to overall memory consumption."

A PyTorch model at batch size 1, the article's case, takes one step: a
linear layer's matrix product (cuBLAS) and a convolution (cuDNN). The
device memory the process holds, as NVML counts it (its context, the
kernels loaded, PyTorch's pool), is read before the step and after it; the
step's own results are a few kilobytes, so what the step adds is what the
libraries take at their first call: handles, workspaces, their kernels.
The judge reads it as a share of everything the process holds.

What to notice: the control, own_kernels, computes the same results with
PyTorch's own kernels (products and sums, and an unfold for the
convolution) instead of cuBLAS and cuDNN, and both check the results
against the CPU's.
"""

import os

import torch

from casebook import contexts_by_device, names


def _held():
    """This process's device memory on its GPU, as NVML counts it (0 where
    NVML cannot say)."""
    torch.cuda.synchronize()
    return contexts_by_device([os.getpid()])[os.getpid()].get(0, 0)


def _step(libraries, w, x, conv, img):
    """One step of the model: with cuBLAS and cuDNN, or with PyTorch's own
    elementwise kernels and sums computing the same."""
    if libraries:
        return x @ w, conv(img)
    y = (x.T * w).sum(0, keepdim=True)
    cols = torch.nn.functional.unfold(img, conv.kernel_size)  # 1 × 27 × 900
    z = (conv.weight.view(conv.out_channels, -1, 1) * cols).sum(1)
    return y, z.view(1, conv.out_channels, 30, 30) + conv.bias.view(1, -1, 1, 1)


def _footprint(rec, libraries):
    torch.manual_seed(0)
    w = torch.randn(256, 256, device="cuda")
    x = torch.randn(1, 256, device="cuda")
    conv = torch.nn.Conv2d(3, 8, 3).cuda()
    img = torch.randn(1, 3, 32, 32, device="cuda")
    before = _held()
    with torch.no_grad():
        y, z = rec.step("the model's step", lambda: _step(libraries, w, x, conv, img))
        after = _held()
        cpu = conv.cpu()
        right = torch.allclose(y.cpu(), x.cpu() @ w.cpu(), rtol=1e-2, atol=1e-2) and torch.allclose(
            z.cpu(), cpu(img.cpu()), rtol=1e-2, atol=1e-2
        )
    rec.check(names.STEP_RIGHT, right)
    if before == 0 or after == 0:
        rec.fact(names.PROCESS_MEMORY_READ, "NVML gives no figure for this process")
        return
    rec.measure(names.PROCESS_BYTES_BEFORE_THE_STEP, before)
    rec.measure(names.BYTES_THE_STEP_ADDS, after - before)
    rec.measure(names.STEP_SHARE_OF_PROCESS_MEMORY, (after - before) / after)


# ANCHOR: library
def library(rec):
    _footprint(rec, libraries=True)  # the step through cuBLAS and cuDNN


# ANCHOR_END: library


# ANCHOR: own_kernels
def own_kernels(rec):
    _footprint(rec, libraries=False)  # the control: PyTorch's own kernels


# ANCHOR_END: own_kernels
