"""Two PyTorch processes on one GPU, each sizing its work from the free
memory it saw at start (`torch.cuda.mem_get_info()`), as if the GPU were
its own: both plan on the same bytes, and the second to allocate gets
`torch.OutOfMemoryError`.

What to notice: the fix gives each process a share up front,
`torch.cuda.set_per_process_memory_fraction`, and sizes the work from that
share; PyTorch's allocator then refuses to go past it.
"""

import multiprocessing

import torch

from casebook import names, result_name

PROCESSES = 2
SHARE = 0.45  # of the device's total memory, per process, in the fix


def _plan_from_free():
    free, _ = torch.cuda.mem_get_info()
    return free // 10 * 9  # BUG: the other process saw the same free memory


def _plan_from_share():
    torch.cuda.set_per_process_memory_fraction(SHARE)
    _, total = torch.cuda.mem_get_info()
    return int(total * SHARE) // 10 * 9  # within this process's own share


def trainer(plan, read, tried, results):
    """One process: plans, waits until every process has planned,
    allocates, waits until every process has tried, and reports."""
    planned = plan()
    read.wait()
    try:
        block = torch.empty(planned, dtype=torch.uint8, device="cuda")
        said = "ok"
    except Exception as e:
        block, said = None, result_name(e)
    tried.wait()
    results.put((said, planned))
    del block


def _run(rec, plan):
    # Spawned, never forked: the parent does not touch CUDA at all.
    context = multiprocessing.get_context("spawn")
    read, tried = context.Barrier(PROCESSES), context.Barrier(PROCESSES)
    results = context.Queue()
    processes = [
        context.Process(target=trainer, args=(plan, read, tried, results)) for _ in range(PROCESSES)
    ]
    for p in processes:
        p.start()
    outcomes = [results.get(timeout=180) for _ in processes]
    for p in processes:
        p.join(timeout=60)
    # Those that allocated first, so which one won the race does not show.
    outcomes.sort(key=lambda o: o[0] != "ok")
    for i, (said, planned) in enumerate(outcomes, start=1):
        rec.step_result(f"process {i}: torch.empty(planned)", said)
        rec.measure(names.PLANNED_BYTES, planned)
    completed = sum(said == "ok" for said, _ in outcomes)
    rec.measure(names.PROCESSES_COMPLETED, completed)
    rec.check(names.BOTH, completed == PROCESSES)


def broken(rec):
    # ANCHOR: broken
    _run(rec, _plan_from_free)
    # ANCHOR_END: broken


def fixed(rec):
    # ANCHOR: fixed
    _run(rec, _plan_from_share)
    # ANCHOR_END: fixed
