"""A data-parallel job starts one process per rank with torch.distributed
and NCCL, and every rank uses the default GPU, `cuda:0`: no rank calls
`torch.cuda.set_device(local_rank)`, or the job starts more ranks than the
machine has GPUs. NCCL refuses a communicator whose ranks share a device:
"ncclInvalidUsage … Duplicate GPU detected : rank 1 and rank 0 both on CUDA
device …", raised by PyTorch as `torch.distributed.DistBackendError`.

What to notice: each rank's error names the other rank and the device's bus
id. The fix starts one rank per GPU the machine has and puts each on its
own (`set_device(rank)`); on a machine with one GPU that is one rank.
"""

import contextlib
import multiprocessing
import os
import re
import tempfile

import torch
import torch.distributed as dist

from casebook import message_of, names, qualified_name

CONFIGURED_RANKS = 2  # the job's configuration: two ranks


def nccl_result_name(exc):
    """An NCCL error as a run records it: the exception's type and NCCL's
    own lines (`ncclInvalidUsage: …`, the last error), figures replaced by
    `…`. The first line, PyTorch's source path and NCCL's version, differs
    from build to build."""
    lines = [line.strip() for line in str(exc).splitlines()]
    kept = [line for line in lines if line.startswith("nccl")]
    after = lines.index("Last error:") + 1 if "Last error:" in lines else None
    if after is not None and after < len(lines):
        kept.append(lines[after])
    said = " ".join(kept) if kept else lines[0]
    return f"{qualified_name(exc)}: {re.sub(r'[0-9a-fA-F]*[0-9][0-9a-fA-F]*', '…', said)}"


def rank_main(rank, world, device, path, results):
    """One rank: its device, the communicator, one all_reduce of ones."""
    torch.cuda.set_device(device)
    try:
        dist.init_process_group("nccl", init_method=f"file://{path}", rank=rank, world_size=world)
        t = torch.ones(4, device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        said, message, total = "ok", None, t[0].item()
    except Exception as e:
        said, message, total = nccl_result_name(e), message_of(e), None
    with contextlib.suppress(Exception):
        dist.destroy_process_group()
    results.put((rank, said, message, total))


def _run(rec, world, device_of):
    # Spawned, as torchrun starts ranks: the parent does not touch CUDA.
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    fd, path = tempfile.mkstemp(prefix="casebook-nccl-")
    os.close(fd)
    os.unlink(path)  # the file store creates it
    processes = [
        context.Process(target=rank_main, args=(r, world, device_of(r), path, results))
        for r in range(world)
    ]
    for p in processes:
        p.start()
    outcomes = sorted(results.get(timeout=120) for _ in processes)
    for p in processes:
        p.join(timeout=60)
    rec.measure(names.RANKS, world)
    for rank, said, message, _ in outcomes:
        rec.step_result(f"rank {rank}: init_process_group + all_reduce", said, message=message)
    summed = [total for _, said, _, total in outcomes if said == "ok"]
    rec.check(names.ALL_REDUCED, len(summed) == world and all(s == world for s in summed))


def broken(rec):
    # ANCHOR: broken
    world = CONFIGURED_RANKS
    _run(rec, world, lambda rank: 0)  # BUG: every rank on cuda:0
    # ANCHOR_END: broken


def fixed(rec):
    # ANCHOR: fixed
    world = min(CONFIGURED_RANKS, torch.cuda.device_count())  # FIX: no more ranks than GPUs
    _run(rec, world, lambda rank: rank)  # each rank on its own GPU
    # ANCHOR_END: fixed
