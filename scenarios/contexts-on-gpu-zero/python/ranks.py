"""A data-parallel job starts one process per GPU, as torchrun does, and each
rank means to use its own GPU: `torch.cuda.set_device(rank)`. Rank 0 saved a
checkpoint from `cuda:0`; every rank resumes from it. Two things put a rank's
CUDA context on GPU 0 as well, where every rank then holds one (hundreds of
MiB each) and GPU 0 runs out of memory first:

- `torch.load(path)` without `map_location`: the tensors go back to the
  device they were saved from, `cuda:0`, whatever device the rank selected;
- a CUDA call before `set_device` (a warm-up `.cuda()`), which runs on the
  current device, still GPU 0.

What to notice: NVML's list of compute processes on each GPU says where each
rank's process holds a context; the parent reads it while the ranks wait.
The model lands on the rank's own GPU in every variant; only the context on
GPU 0 differs. The fix selects the device before the first CUDA call and
loads with `map_location=f"cuda:{rank}"`.
"""

import multiprocessing
import os
import queue
import tempfile
import time

import torch

from casebook import contexts_by_device, message_of, names, result_name

WORLD = 2  # one rank per GPU of the pair
RESULT_TIMEOUT = 120  # seconds for both ranks to start CUDA, save and load


# ANCHOR: broken
def resume_broken(rank, path):
    torch.cuda.set_device(rank)
    model = torch.nn.Linear(256, 256).cuda()
    wait_for_checkpoint(rank, path, model)
    state = torch.load(path)  # BUG: back on cuda:0, where rank 0 saved it
    model.load_state_dict(state)
    return state


# ANCHOR_END: broken


# ANCHOR: early_call
def resume_early_call(rank, path):
    torch.zeros(1).cuda()  # BUG: a CUDA call before set_device, on GPU 0
    torch.cuda.set_device(rank)
    model = torch.nn.Linear(256, 256).cuda()
    wait_for_checkpoint(rank, path, model)
    state = torch.load(path, map_location=f"cuda:{rank}")
    model.load_state_dict(state)
    return state


# ANCHOR_END: early_call


# ANCHOR: fixed
def resume_fixed(rank, path):
    torch.cuda.set_device(rank)
    model = torch.nn.Linear(256, 256).cuda()
    wait_for_checkpoint(rank, path, model)
    state = torch.load(path, map_location=f"cuda:{rank}")  # FIX: onto the rank's own GPU
    model.load_state_dict(state)
    return state


# ANCHOR_END: fixed


# ANCHOR: meta_load
def resume_meta_load(rank, path):
    torch.cuda.set_device(rank)
    model = torch.nn.Linear(256, 256).cuda()
    wait_for_checkpoint(rank, path, model)
    state = torch.load(path, map_location="meta")  # shapes only: no storage read
    model.load_state_dict(state, assign=True)  # a meta tensor has no data to copy
    return state


# ANCHOR_END: meta_load


def wait_for_checkpoint(rank, path, model):
    """Rank 0 saves its model's state dict, from cuda:0, as the job did at
    the end of an earlier run; the others wait until the file is whole."""
    done = path + ".done"
    if rank == 0:
        torch.save(model.state_dict(), path)
        open(done, "w").close()
        return
    for _ in range(RESULT_TIMEOUT * 10):
        if os.path.exists(done):
            return
        time.sleep(0.1)
    raise TimeoutError("rank 0 did not save the checkpoint")


def _observe_restore(seen):
    """Where torch.load first puts each storage it reads: its default
    restore function, through which every map_location but a callable
    passes, is wrapped to note the device of each storage it is handed
    before it moves it. What it returns is unchanged."""
    original = torch.serialization.default_restore_location

    def observed(storage, location):
        seen.append(storage.device.type)
        return original(storage, location)

    torch.serialization.default_restore_location = observed


def _rank_main(resume, rank, path, checked, results):
    """One rank: `resume` as the variant writes it; then it waits, its
    contexts alive, while the parent reads NVML."""
    seen = []
    _observe_restore(seen)
    try:
        state = resume(rank, path)
        torch.cuda.synchronize()
        loaded_on = str(next(iter(state.values())).device)
        said, message = "ok", None
    except Exception as e:
        said, message, loaded_on = result_name(e), message_of(e), None
    first_on = ", ".join(sorted(set(seen))) or "not seen"
    results.put((rank, os.getpid(), said, message, loaded_on, first_on))
    checked.wait(RESULT_TIMEOUT)


def _run(rec, resume):
    # Spawned, as torchrun starts ranks: the parent never touches CUDA, so
    # NVML's lists hold the ranks alone.
    context = multiprocessing.get_context("spawn")
    checked, results = context.Event(), context.Queue()
    folder = tempfile.mkdtemp(prefix="casebook-checkpoint-")
    path = os.path.join(folder, "checkpoint.pt")
    processes = [
        context.Process(target=_rank_main, args=(resume, rank, path, checked, results))
        for rank in range(WORLD)
    ]
    for p in processes:
        p.start()
    try:
        got = sorted(results.get(timeout=RESULT_TIMEOUT) for _ in processes)
        held = contexts_by_device([pid for _, pid, *_ in got])
    except queue.Empty:
        got, held = [], {}
    finally:
        checked.set()
        for p in processes:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
        for file in os.listdir(folder):
            os.remove(os.path.join(folder, file))
        os.rmdir(folder)
    rec.measure(names.RANKS, WORLD)
    on_own_gpu_only = len(got) == WORLD
    for rank, pid, said, message, loaded_on, first_on in got:
        rec.step_result(f"rank {rank}: resume from the checkpoint", said, message=message)
        devices = held.get(pid, {})
        on_own_gpu_only = on_own_gpu_only and sorted(devices) == [rank]
        if rank == 1:
            rec.fact(names.RANK1_CONTEXT_ON_GPU0, 0 in devices)
            rec.measure(names.RANK1_MEMORY_ON_GPU0, devices.get(0, 0))
            rec.fact(names.RANK1_STORAGES_FIRST_ON, first_on)
            if loaded_on is not None:
                rec.fact(names.RANK1_LOADED_ON, loaded_on)
                rec.fact(names.LOADED_WHERE_SAVED, loaded_on == "cuda:0")
    rec.check(names.EACH_RANK_ON_ITS_OWN_GPU, on_own_gpu_only)


def broken(rec):
    _run(rec, resume_broken)


def early_call(rec):
    _run(rec, resume_early_call)


def fixed(rec):
    _run(rec, resume_fixed)


def meta_load(rec):
    _run(rec, resume_meta_load)
