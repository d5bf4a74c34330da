"""Two frameworks on one GPU: a JAX process (an evaluation server, a data
pipeline) starts first, and a PyTorch process beside it cannot allocate
what the GPU plainly has room for. JAX preallocates 75% of the GPU's memory
when it starts (XLA_PYTHON_CLIENT_PREALLOCATE, on by default), whatever it
will use; PyTorch's message then lists the JAX process among the holders:
"Process … has … GiB memory in use".

What to notice: the JAX process computes the same thing in both variants;
started with XLA_PYTHON_CLIENT_PREALLOCATE=false it takes only what it
uses, and the PyTorch process's tensors fit beside it.
"""

import os
import subprocess
import sys

from casebook import names

JAX_WORK = """
import sys, jax.numpy as jnp
x = jnp.ones((1024, 1024)).sum()
x.block_until_ready()
print("ready", flush=True)
sys.stdin.readline()  # holds its memory until the parent is done
"""

SHARE = 0.40  # of the GPU's total: what the PyTorch process needs


def _run(rec, jax_env):
    env = dict(os.environ, **jax_env)
    jax_process = subprocess.Popen(
        [sys.executable, "-c", JAX_WORK],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    # Imported while the JAX process starts, not before: neither waits for
    # the other's imports. PyTorch touches the GPU only once JAX is ready.
    import torch

    try:
        ready = jax_process.stdout.readline().strip() == "ready"
        rec.step_result("JAX process: jnp.ones((1024, 1024)).sum()", "ok" if ready else "no answer")
        _, total = torch.cuda.mem_get_info()
        rec.measure(names.TOTAL, total)
        need = int(total * SHARE)
        attempt = rec.attempt(
            "PyTorch process: torch.empty(40% of the GPU)",
            lambda: torch.empty(need, dtype=torch.uint8, device="cuda").numel(),
        )
        rec.check(names.TORCH_ALLOCATES, attempt.ok and attempt.value == need)
    finally:
        jax_process.stdin.close()
        jax_process.wait(timeout=60)


def broken(rec):
    # ANCHOR: broken
    _run(rec, {})  # BUG: JAX's default, 75% of the GPU taken at start
    # ANCHOR_END: broken


def fixed(rec):
    # ANCHOR: fixed
    _run(rec, {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})  # FIX: JAX takes what it uses
    # ANCHOR_END: fixed
