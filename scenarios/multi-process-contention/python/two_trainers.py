"""Two PyTorch processes on one GPU, each sizing its work from the free
memory it saw at start (`torch.cuda.mem_get_info()`), as if the GPU were
its own: both plan on the same bytes, and the second to allocate gets
`torch.OutOfMemoryError`.

What to notice: the fix gives each process its share of the free memory
up front (90% of it, divided by the process count), caps PyTorch's
allocator there with `torch.cuda.set_per_process_memory_fraction`, and
sizes the work from that share. A share of the free memory, not of the
total: a third process holding half the GPU leaves both room.

Only the trainers import torch: the parent starts them and gathers what
they report, and would spend seconds importing what it never calls.
"""

import multiprocessing

from casebook import message_of, names, result_name

PROCESSES = 2


def _plan_from_free():
    import torch

    free, _ = torch.cuda.mem_get_info()
    return free // 10 * 9  # BUG: the other process saw the same free memory


def _plan_from_share():
    import torch

    free, total = torch.cuda.mem_get_info()
    share = free / 10 * 9 / PROCESSES  # FIX: a budget per process, from a shared plan
    torch.cuda.set_per_process_memory_fraction(share / total)
    return int(share) // 10 * 9  # within this process's own share


def trainer(plan, read, tried, results):
    """One process: plans, waits until every process has planned,
    allocates, waits until every process has tried, and reports."""
    import torch

    planned = plan()
    read.wait()
    try:
        block = torch.empty(planned, dtype=torch.uint8, device="cuda")
        said, message = "ok", None
    except Exception as e:
        block, said, message = None, result_name(e), message_of(e)
    tried.wait()
    results.put((said, message, planned))
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
    for i, (said, message, planned) in enumerate(outcomes, start=1):
        rec.step_result(f"process {i}: torch.empty(planned)", said, message=message)
        rec.measure(names.PLANNED_BYTES, planned)
    completed = sum(said == "ok" for said, _, _ in outcomes)
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
