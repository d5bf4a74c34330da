"""A producer process puts CUDA tensors in a `torch.multiprocessing` queue
for a consumer, as a loader on one GPU feeds a trainer on another. The tensor
is not copied: it is shared through CUDA IPC and keeps its device, so the
consumer, which works on `cuda:1`, receives a tensor on `cuda:0`. Opening it
creates a context on GPU 0 in the consumer, and the first op that mixes it
with the consumer's own tensors raises "Expected all tensors to be on the
same device". The fix copies it to the consumer's device on arrival.

The producer also owns the memory: it must keep the tensor while the
consumer holds it. A producer that lets it go and exits first warns
"Producer process has been terminated before all shared CUDA tensors
released"; what the consumer then reads is recorded as it comes.

What to notice: the received tensor's device, and NVML's list of GPU 0,
which names the consumer though it never chose GPU 0.
"""

import os
import queue
import shutil
import tempfile

import torch
import torch.multiprocessing as mp

from casebook import SUCCESS, contexts_by_device, message_of, names, qualified_name, result_name

N = 1 << 20
WAIT = 60  # seconds for either process to start CUDA and do its part
SAME_DEVICE = "Expected all tensors to be on the same device"
PRODUCER_GONE = "Producer process has been terminated before all shared CUDA tensors released"
NOTE = "See Note [Sharing CUDA tensors]"


def mismatch_name(exc):
    """PyTorch's device check by the start of its message (its rest has been
    worded more than one way); anything else as the recorder names it."""
    if str(exc).startswith(SAME_DEVICE):
        return f"{qualified_name(exc)}: {SAME_DEVICE}"
    return result_name(exc)


def _producer(log, shared, events, keep_until_released):
    os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)  # its warnings
    torch.cuda.set_device(0)
    batch = torch.arange(N, dtype=torch.float32, device="cuda:0")
    shared.put(batch)  # shared through CUDA IPC, not copied
    events["received"].wait(WAIT)
    if keep_until_released:
        events["released"].wait(WAIT)  # the memory is the producer's until the consumer lets go
    del batch


# ANCHOR: broken
def use_broken(received, weights):
    return received * weights  # BUG: received is on cuda:0, weights on cuda:1


# ANCHOR_END: broken


# ANCHOR: fixed
def use_fixed(received, weights):
    return received.to(weights.device) * weights  # FIX: copied to the consumer's GPU first


# ANCHOR_END: fixed


def _consumer(shared, results, events, use):
    torch.cuda.set_device(1)
    weights = torch.full((N,), 2.0, device="cuda:1")
    received = shared.get(timeout=WAIT)
    results.put(("received", os.getpid(), str(received.device), None))
    events["received"].set()
    if use is None:
        # The producer is gone by the time the consumer reads what it holds.
        events["producer_gone"].wait(WAIT)
        try:
            right = torch.equal(received.cpu(), torch.arange(N, dtype=torch.float32))
            said = "right values" if right else "wrong values"
            results.put(("read", SUCCESS, None, said))
        except Exception as e:
            results.put(("read", result_name(e), message_of(e), None))
    else:
        try:
            product = use(received, weights)
            right = torch.equal(product.cpu(), torch.arange(N, dtype=torch.float32) * 2.0)
            results.put(("used", SUCCESS, None, right))
        except RuntimeError as e:
            results.put(("used", mismatch_name(e), message_of(e), False))
    events["checked"].wait(WAIT)  # NVML is read while the consumer still holds the tensor
    del received
    events["released"].set()


def _run(rec, use, keep_until_released=True):
    # Spawned: CUDA tensors travel between processes only so, and the parent
    # never touches CUDA.
    context = mp.get_context("spawn")
    shared, results = context.Queue(), context.Queue()
    events = {
        name: context.Event() for name in ("received", "producer_gone", "checked", "released")
    }
    folder = tempfile.mkdtemp(prefix="casebook-ipc-")
    log = os.path.join(folder, "producer.log")
    producer = context.Process(target=_producer, args=(log, shared, events, keep_until_released))
    consumer = context.Process(target=_consumer, args=(shared, results, events, use))
    producer.start()
    consumer.start()
    said = {}
    try:
        kind, pid, device, _ = results.get(timeout=WAIT)
        said[kind] = (pid, device)
        if use is None:
            producer.join(timeout=WAIT)
            events["producer_gone"].set()
        kind, result, message, value = results.get(timeout=WAIT)
        said[kind] = (result, message, value)
        held = contexts_by_device([pid])
    except queue.Empty:
        held = {}
    finally:
        events["checked"].set()
        events["producer_gone"].set()
        for p in (consumer, producer):
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    try:
        with open(log, errors="replace") as f:
            written = f.read()
    except OSError:
        written = ""
    warned = [line for line in written.splitlines() if PRODUCER_GONE in line]
    shutil.rmtree(folder, ignore_errors=True)

    if "received" in said:
        pid, device = said["received"]
        rec.fact(names.RECEIVED_ON, device)
        rec.fact(names.CONSUMER_CONTEXT_ON_GPU0, 0 in held.get(pid, {}))
    if warned:
        # From PyTorch's words to the note they name: a log prefix (level,
        # time, source line) comes before, and may come after.
        line = warned[0][warned[0].index(PRODUCER_GONE) :]
        note = line.find(NOTE)
        line = (line[: note + len(NOTE)] if note >= 0 else line).strip()
        rec.step_result(
            "producer: exit while the consumer holds its tensor", line, message=warned[0]
        )
    rec.fact(names.PRODUCER_WARNED, bool(warned))
    if not warned and not keep_until_released:
        # The producer exited holding nothing back, or said it otherwise: the
        # end of what it wrote, for whoever reads the report.
        rec.step_result(
            "producer: exit while the consumer holds its tensor",
            SUCCESS,
            message=written[-2000:] or None,
        )
    if "used" in said:
        result, message, right = said["used"]
        rec.step_result(
            "consumer: the received tensor times its own weights", result, message=message
        )
        rec.check(names.RESULT_RIGHT, right)
    if "read" in said:
        result, message, value = said["read"]
        # Provoked on purpose: what the read gives is the observation.
        rec.step_result(
            "consumer: read the tensor after the producer exited",
            result,
            tolerated=True,
            message=message,
        )
        rec.fact(names.READ_AFTER_PRODUCER_EXIT, value if result == SUCCESS else result)


def broken(rec):
    _run(rec, use_broken)


def fixed(rec):
    _run(rec, use_fixed)


# ANCHOR: producer_exits
def producer_exits(rec):
    # BUG: the producer lets its tensor go and exits while the consumer holds it
    _run(rec, use=None, keep_until_released=False)


# ANCHOR_END: producer_exits
