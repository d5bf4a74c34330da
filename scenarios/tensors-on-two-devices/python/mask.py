"""A job is given a GPU other than the first (`cuda:1`) and puts its model
there. Inside `forward`, a tensor is made with `device="cuda"`: that is the
current device, still `cuda:0`, since nothing selected another. The first
operation that mixes it with the activations, which are on `cuda:1`, raises
"Expected all tensors to be on the same device", naming the two devices.

What to notice: the model, the input and the activations are all on
`cuda:1`; only the tensor made with a bare `"cuda"` is not. A tensor made
with no device at all is on the CPU, and the same check refuses it. The fix
makes it on the input's device (`device=x.device`); selecting the job's GPU
first (`torch.cuda.set_device`) makes `"cuda"` mean that GPU.
"""

import ctypes

import torch

from casebook import SUCCESS, message_of, names, qualified_name, result_name

DEVICE = "cuda:1"  # the job's configured GPU: not the first
FEATURES = 64

# How PyTorch's message begins; it has worded the rest in more than one way
# ("but found at least two devices, cuda:1 and cuda:0!", "but got … is on
# cuda:0, different from other tensors on cuda:1"), so the name is this start.
SAME_DEVICE = "Expected all tensors to be on the same device"


def mismatch_name(exc):
    """A failed call's name: PyTorch's device check by the start of its
    message, anything else as the recorder names it. The whole message, both
    devices named, goes to the report."""
    if str(exc).startswith(SAME_DEVICE):
        return f"{qualified_name(exc)}: {SAME_DEVICE}"
    return result_name(exc)


class Masked(torch.nn.Module):
    def __init__(self, make_mask):
        super().__init__()
        self.linear = torch.nn.Linear(FEATURES, FEATURES)
        self.make_mask = make_mask

    def forward(self, x):
        return self.linear(x) * self.make_mask(x)


# ANCHOR: broken
def mask_broken(x):
    return torch.ones(x.shape[-1], device="cuda")  # BUG: "cuda" is the current device, cuda:0


# ANCHOR_END: broken


# ANCHOR: cpu_tensor
def mask_on_cpu(x):
    return torch.ones(x.shape[-1])  # BUG: no device at all: the CPU


# ANCHOR_END: cpu_tensor


# ANCHOR: fixed
def mask_fixed(x):
    return torch.ones(x.shape[-1], device=x.device)  # FIX: the input's device


# ANCHOR_END: fixed


def _run(rec, make_mask, select_first=False):
    if select_first:
        rec.step("torch.cuda.set_device(cuda:1)", lambda: torch.cuda.set_device(DEVICE))
    model = Masked(make_mask).to(DEVICE)
    x = torch.randn(8, FEATURES, device=DEVICE)
    rec.fact(names.CURRENT_DEVICE, f"cuda:{torch.cuda.current_device()}")
    rec.fact(names.MODEL_DEVICE, str(next(model.parameters()).device))
    rec.fact(names.MASK_DEVICE, str(make_mask(x).device))
    try:
        y = model(x)
        ran = torch.equal(y, model.linear(x))  # the mask is all ones
        rec.step_result("model(x)", SUCCESS)
    except RuntimeError as e:
        rec.step_result("model(x)", mismatch_name(e), message=message_of(e))
        ran = False
    rec.check(names.FORWARD_RAN, ran)


def broken(rec):
    _run(rec, mask_broken)


def cpu_tensor(rec):
    _run(rec, mask_on_cpu)


def fixed(rec):
    _run(rec, mask_fixed)


# ANCHOR: set_device_first
def set_device_first(rec):
    # FIX: the job's GPU selected first, so "cuda" means cuda:1
    _run(rec, mask_broken, select_first=True)


# ANCHOR_END: set_device_first


# ANCHOR: peer_enabled
def peer_enabled(rec):
    # broken-py's code, after the CUDA runtime PyTorch loaded has enabled
    # cuda:1's access to cuda:0's memory (peer-to-peer), the condition the
    # documentation's sentence names
    rec.fact(names.PEER_ACCESS_IS_POSSIBLE, torch.cuda.can_device_access_peer(1, 0))
    torch.cuda.init()
    try:
        cudart = ctypes.CDLL("libcudart.so.13")  # the one PyTorch loaded
    except OSError as e:
        rec.step_result("dlopen(libcudart.so.13)", "OSError", message=str(e))
        return
    for device, peer in ((1, 0), (0, 1)):  # each GPU may access the other's memory
        rec.step_result(
            f"cudaSetDevice({device})", _runtime_name(cudart, cudart.cudaSetDevice(device))
        )
        code = cudart.cudaDeviceEnablePeerAccess(peer, 0)
        rec.step_result(
            f"cudaDeviceEnablePeerAccess({peer}) on cuda:{device}", _runtime_name(cudart, code)
        )
    # the current device is cuda:0 again, as in broken-py
    _run(rec, mask_broken)


# ANCHOR_END: peer_enabled


def _runtime_name(cudart, code):
    cudart.cudaGetErrorName.restype = ctypes.c_char_p
    return cudart.cudaGetErrorName(code).decode()
