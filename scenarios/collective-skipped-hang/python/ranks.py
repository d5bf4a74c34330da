"""Two ranks train data-parallel with NCCL, one per GPU, and all-reduce their
gradients after every batch. Each rank loops over its own shard of the data,
and the shards are uneven: rank 1 has one batch fewer. After its last batch
rank 1 goes on to whatever comes next, and rank 0's last all_reduce waits for
a partner that never comes. Nothing fails: rank 0 hangs until PyTorch's
watchdog, after the process group's timeout, reports "Watchdog caught
collective operation timeout: WorkNCCL(… OpType=ALLREDUCE …) ran for …
milliseconds before timing out" and takes the process down.

The timeout is ten minutes by default, in NCCL's process groups as in
PyTorch's; this job sets ten seconds (`init_process_group(timeout=...)`), so
the hang is bounded and the run goes on. The parent keeps each rank's stderr,
where the watchdog writes, and ends both ranks before it returns.

What to notice: rank 1 raises nothing; the rank that is reported is the one
that waited. The fix makes every rank run the same number of steps, the
shortest shard's, agreed with one all_reduce (MIN) before the loop, as
`DistributedSampler(drop_last=True)` or the `join` context manager arrange.
"""

import datetime
import multiprocessing
import os
import queue
import re
import shutil
import signal
import tempfile
import time

import torch
import torch.distributed as dist

from casebook import SUCCESS, message_of, names, result_name

WORLD = 2  # one rank per GPU of the pair
BATCHES = (4, 3)  # each rank's shard: rank 1 has one batch fewer
TIMEOUT = datetime.timedelta(seconds=10)  # the process group's; the default is ten minutes
WAIT = 90  # seconds the parent waits for the ranks: the timeout, the watchdog, the abort
WATCHDOG = "Watchdog caught collective operation timeout"


# ANCHOR: broken
def steps_broken(rank):
    return BATCHES[rank]  # BUG: each rank its own shard's length; rank 1 stops one all_reduce early


# ANCHOR_END: broken


# ANCHOR: fixed
def steps_fixed(rank):
    count = torch.tensor([BATCHES[rank]], device="cuda")
    dist.all_reduce(count, op=dist.ReduceOp.MIN)  # FIX: every rank runs the shortest shard's steps
    return int(count.item())


# ANCHOR_END: fixed


def _rank_main(rank, steps_of, teardown, store, log, results, release):
    """One rank: its GPU, the process group with the job's timeout, then one
    all_reduce of its gradient per batch, each step reported as it ends."""
    # PyTorch's C++ log and the abort go to fd 2: kept in a file for the parent.
    os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    try:
        torch.cuda.set_device(rank)
        dist.init_process_group(
            "nccl",
            init_method=f"file://{store}",
            rank=rank,
            world_size=WORLD,
            timeout=TIMEOUT,
            device_id=torch.device(f"cuda:{rank}"),
        )
        grad = torch.ones(1024, device="cuda")
        steps = steps_of(rank)
        for step in range(1, steps + 1):
            dist.all_reduce(grad)
            torch.cuda.synchronize()  # the step uses the sum: it waits for the collective
            results.put(("step", rank, step, None))
        results.put(("done", rank, steps, grad[0].item()))
    except Exception as e:
        results.put(("error", rank, result_name(e), message_of(e)))
    # The job's next phase would start here; the parent says when this rank
    # may end, once it has seen what became of the other.
    release.wait(WAIT)
    if teardown:
        dist.destroy_process_group()
    else:
        # Rank 0 never ended its collective; NCCL's teardown might wait on it.
        os._exit(0)


def _read(log):
    try:
        with open(log, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _watchdog_line(text):
    """The watchdog's report in a rank's stderr, from its first words to the
    end of its line, if it wrote one."""
    at = text.find(WATCHDOG)
    return text[at:].splitlines()[0].strip() if at >= 0 else None


def _named(line):
    """A watchdog report's name: cut before its first figure, as a failed
    call's is (the sequence number, the sizes and the times differ by run)."""
    figure = re.search(r"\d", line)
    return line[: figure.start()].rstrip() + " …" if figure else line


def _ended(p):
    if p.exitcode is None:
        return "still running: killed by the variant"
    if p.exitcode < 0:
        return f"killed by {signal.Signals(-p.exitcode).name}"
    return f"exited with code {p.exitcode}"


def _run(rec, steps_of, teardown):
    # Spawned, as torchrun starts ranks: the parent never touches CUDA.
    context = multiprocessing.get_context("spawn")
    results, release = context.Queue(), context.Event()
    folder = tempfile.mkdtemp(prefix="casebook-nccl-")
    store = os.path.join(folder, "store")
    logs = [os.path.join(folder, f"rank{rank}.log") for rank in range(WORLD)]
    processes = [
        context.Process(
            target=_rank_main,
            args=(rank, steps_of, teardown, store, logs[rank], results, release),
        )
        for rank in range(WORLD)
    ]
    for p in processes:
        p.start()
    steps = [0] * WORLD
    finals = {}  # rank -> ("done", steps, value) or ("error", name, message)
    deadline = time.monotonic() + WAIT
    while len(finals) < WORLD and time.monotonic() < deadline:
        try:
            kind, rank, a, b = results.get(timeout=1)
        except queue.Empty:
            if all(r in finals or not processes[r].is_alive() for r in range(WORLD)):
                break  # a rank ended without its last word: the watchdog took it down
            continue
        if kind == "step":
            steps[rank] = a
        else:
            finals[rank] = (kind, a, b)
    release.set()
    for p in processes:
        p.join(timeout=30)
    for p in processes:
        if p.is_alive():
            p.kill()
            p.join(timeout=10)
    ended = [_ended(p) for p in processes]
    texts = [_read(log) for log in logs]
    lines = [_watchdog_line(text) for text in texts]
    shutil.rmtree(folder, ignore_errors=True)

    rec.measure(names.TIMEOUT_SECONDS, TIMEOUT.total_seconds())
    for rank in range(WORLD):
        call = f"rank {rank}: all_reduce of the gradient, once per batch"
        kind, a, b = finals.get(rank, (None, None, None))
        if kind == "done":
            rec.step_result(call, SUCCESS)
        elif kind == "error":
            rec.step_result(call, a, message=b)
        elif lines[rank] is not None:
            rec.step_result(call, _named(lines[rank]), message=lines[rank])
            ran_for = re.search(r"ran for (\d+) milliseconds", lines[rank])
            if ran_for:
                rec.measure(names.COLLECTIVE_RAN_FOR, int(ran_for.group(1)) / 1000)
        else:
            # The end of what it wrote, for whoever reads the report.
            rec.step_result(
                call, f"ended without a word: {ended[rank]}", message=texts[rank][-2000:] or None
            )
        rec.fact((names.RANK0_STEPS, names.RANK1_STEPS)[rank], steps[rank])
        rec.fact((names.RANK0_ENDED, names.RANK1_ENDED)[rank], ended[rank])
    rec.check(names.NOTHING_LEFT_RUNNING, not any(p.is_alive() for p in processes))
    # Every rank ran every step, the same number, and each sum was whole:
    # the gradient of ones doubles once per all_reduce of two ranks.
    done = [finals.get(rank, ("missing", None, None)) for rank in range(WORLD)]
    reduced = (
        all(kind == "done" for kind, _, _ in done)
        and len({n for _, n, _ in done}) == 1
        and all(value == 2.0**n for _, n, value in done)
    )
    rec.check(names.ALL_STEPS_REDUCED, reduced)


def broken(rec):
    _run(rec, steps_broken, teardown=False)


def fixed(rec):
    _run(rec, steps_fixed, teardown=True)
