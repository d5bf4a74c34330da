"""The recorder for the casebook's Python variants.

A Python variant is a function ``variant(rec)`` in its scenario's ``python/``
folder. The harness runs it in a process of its own
(``python3 -m casebook <file> <function>``), and the variant records what it
observes through ``rec``: the same events, one JSON line each, that the Rust
and C++ recorders write (``crates/model/src/recorder.rs``), so the harness
judges and snapshots it the same way.

The names it records are its scenario's ``names.toml``, read at import:
``names.OOM_RAISED`` is the declared name, and a name that is not declared
is an AttributeError, never a silent new key.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EVENTS_ENV = "CASEBOOK_EVENTS"
NAMES_ENV = "CASEBOOK_NAMES"

# What a call that returned is recorded as; the harness counts it as success.
SUCCESS = "ok"

UNITS = ("bytes", "count", "seconds", "ratio", "factor")


@dataclass(frozen=True)
class CheckName:
    name: str


@dataclass(frozen=True)
class FactName:
    name: str


@dataclass(frozen=True)
class MeasureName:
    key: str
    unit: str


@dataclass(frozen=True)
class SeriesName:
    key: str
    per: str
    unit: str


class Names:
    """A scenario's vocabulary: one attribute per entry of its names.toml."""

    def __init__(self, table: dict[str, Any]):
        self._entries: dict[str, Any] = {}
        for heading, entries in table.items():
            for ident, value in entries.items():
                self._entries[ident] = _entry(heading, ident, value)

    def __getattr__(self, ident: str) -> Any:
        try:
            return self._entries[ident]
        except KeyError:
            raise AttributeError(f"{ident} is not declared in names.toml") from None

    def __iter__(self):
        return iter(self._entries.items())


def _entry(heading: str, ident: str, value: Any) -> Any:
    def field(name: str) -> str:
        if not isinstance(value, dict) or not isinstance(value.get(name), str):
            raise ValueError(f"names.toml: {heading}.{ident}: `{name}` is missing")
        return value[name]

    if heading == "checks":
        return CheckName(value if isinstance(value, str) else field("name"))
    if heading == "facts":
        return FactName(value if isinstance(value, str) else field("name"))
    if heading in ("measures", "series"):
        unit = field("unit")
        if unit not in UNITS:
            raise ValueError(f"names.toml: {heading}.{ident}: unit `{unit}` is not one of {UNITS}")
        if heading == "measures":
            return MeasureName(field("key"), unit)
        return SeriesName(field("key"), field("per"), unit)
    raise ValueError(f"names.toml: unknown table [{heading}]")


def load_names(path: str | None = None) -> Names:
    path = path or os.environ.get(NAMES_ENV)
    if not path:
        return Names({})
    with open(path, "rb") as f:
        return Names(tomllib.load(f))


names = load_names()

# Names any scenario may record (crates/model/src/global_names.rs).
REDUCED = FactName("reduced for the sanitizer")

SANITIZER_ENV = "CASEBOOK_SANITIZER"


def result_name(exc: BaseException) -> str:
    """What a failed call is recorded as: the exception's type and the start
    of the text a user sees, cut before the first figure so that every GPU
    gives the same name. ``torch.OutOfMemoryError: CUDA out of memory. Tried
    to allocate …``, ``torch.AcceleratorError: CUDA error: device-side assert
    triggered``."""
    named = qualified_name(exc)
    lines = str(exc).strip().splitlines()
    if not lines:
        return named
    kept = []
    for sentence in re.split(r"(?<=\.)\s+", lines[0].strip())[:2]:
        figure = re.search(r"\d", sentence)
        if figure:
            kept.append(sentence[: figure.start()].rstrip() + " …")
            break
        kept.append(sentence)
    return f"{named}: {' '.join(kept)}"


MESSAGE_LIMIT = 2000


def qualified_name(exc: BaseException) -> str:
    """`torch.OutOfMemoryError`, `RuntimeError`: as a traceback names it."""
    kind = type(exc)
    module = kind.__module__.split(".")[0]
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def message_of(exc: BaseException) -> str:
    """The error as a traceback's last line shows it: the exception's
    qualified name and its whole message."""
    return f"{qualified_name(exc)}: {str(exc).strip()}"


def without_figures(text: str) -> str:
    """`text` with every figure replaced by `…`: the same on every GPU."""
    return re.sub(r"\d+(\.\d+)?", "…", text)


def visible_gpu_handles() -> list[Any]:
    """NVML's handle of each GPU this process's CUDA sees, in CUDA's order
    (`cuda:0` first): those `CUDA_VISIBLE_DEVICES` names (the harness pins a
    trial by UUID), or every GPU where it is unset. NVML numbers GPUs its own
    way, so a device index of this process is only found through this."""
    import pynvml  # nvidia-ml-py: on the GPU machines, beside torch

    pynvml.nvmlInit()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    handles = []
    for entry in (e.strip() for e in visible.split(",")):
        if entry.startswith("GPU-"):
            handles.append(pynvml.nvmlDeviceGetHandleByUUID(entry.encode()))
        elif entry.isdigit():
            handles.append(pynvml.nvmlDeviceGetHandleByIndex(int(entry)))
        else:
            break  # as CUDA does: an entry it cannot read ends the list
    return handles


def contexts_by_device(pids: list[int]) -> dict[int, dict[int, int]]:
    """Where each of `pids` holds a CUDA context, as NVML's per-GPU lists of
    compute processes say: for each pid, the devices (this process's CUDA
    numbering) that list it, with the device memory NVML counts for it there
    (0 where NVML cannot say). Read from outside the processes, so it needs no
    CUDA in the reader."""
    import pynvml

    held: dict[int, dict[int, int]] = {pid: {} for pid in pids}
    for device, handle in enumerate(visible_gpu_handles()):
        for process in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
            if process.pid in held:
                held[process.pid][device] = process.usedGpuMemory or 0
    return held


def fill_device(leave: int = 0) -> list[Any]:
    """PyTorch tensors allocated until its allocator refuses (or until only
    `leave` bytes are left free), in chunks halving from 1 GiB down to 64 KiB:
    what a program's cache of batches does to the device. The caller keeps
    them, or drops them and leaves the blocks in PyTorch's cache."""
    import torch  # only the PyTorch variants call it

    blocks, chunk = [], 1 << 30
    while chunk >= 1 << 16:
        if leave and torch.cuda.mem_get_info()[0] - chunk < leave:
            chunk //= 2
            continue
        try:
            blocks.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            chunk //= 2
    return blocks


class Recorded(Exception):
    """Raised through a variant when a call it recorded failed: the variant
    ended on that call's error, as a Rust variant's `?` does."""

    def __init__(self, call: str, name: str, message: str):
        super().__init__(f"{call}: {message}")
        self.call = call
        self.name = name


@dataclass
class Attempt:
    """What a call that was allowed to fail did. It keeps no traceback, so
    the failed call's frames (and the tensors in them) are freed."""

    ok: bool
    value: Any = None
    error: str | None = None
    message: str | None = None


class Recorder:
    """Writes events as the harness reads them, each flushed at once, so a
    variant that dies mid-way leaves everything it recorded before."""

    def __init__(self, path: str | None = None):
        path = path or os.environ.get(EVENTS_ENV)
        if not path:
            raise SystemExit(f"{EVENTS_ENV} is not set: the harness runs the variants")
        self._sink = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the whole run)

    def emit(self, event: dict[str, Any]) -> None:
        self._sink.write(json.dumps(event, allow_nan=False) + "\n")
        self._sink.flush()

    def _step(self, call: str, result: str, tolerated: bool, message: str | None = None) -> None:
        step: dict[str, Any] = {"call": call, "result": result}
        if tolerated:
            step["tolerated"] = True
        if message:
            # The whole text a user sees, figures and all: for the report and
            # `explain`'s index, never the snapshot.
            step["message"] = message[:MESSAGE_LIMIT]
        self.emit({"step": step})

    def step(self, call: str, run: Callable[[], Any]) -> Any:
        """Runs one call, records it and returns its value; a call that
        raises is recorded by its error's name, and the variant ends there."""
        try:
            value = run()
        except Exception as exc:
            name = result_name(exc)
            self._step(call, name, False, message_of(exc))
            raise Recorded(call, name, str(exc)) from None
        self._step(call, SUCCESS, False)
        return value

    def attempt(self, call: str, run: Callable[[], Any], tolerated: bool = False) -> Attempt:
        """Runs one call that may fail, records it, and goes on either way.
        `tolerated`: the failure is provoked on purpose, so it is no symptom."""
        try:
            value = run()
        except Exception as exc:
            name, message = result_name(exc), str(exc)
            whole = message_of(exc)
            del exc
            self._step(call, name, tolerated, whole)
            return Attempt(ok=False, error=name, message=message)
        self._step(call, SUCCESS, tolerated)
        return Attempt(ok=True, value=value)

    def step_result(
        self, call: str, result: str, tolerated: bool = False, message: str | None = None
    ) -> None:
        """Records a call made elsewhere (in a child process, through ctypes)
        by the result name it reported: `ok`, or the error's name; `message`,
        the whole text of its error where it had one (`message_of`)."""
        self._step(call, result, tolerated, message)

    def check(self, name: CheckName, ok: bool) -> bool:
        _expect(name, CheckName)
        self.emit({"check": {"name": name.name, "ok": bool(ok)}})
        return bool(ok)

    def fact(self, name: FactName, value: Any) -> None:
        _expect(name, FactName)
        self.emit({"fact": {"key": name.name, "value": value}})

    def measure(self, name: MeasureName, value: float) -> None:
        _expect(name, MeasureName)
        self.emit({"measure": {"key": name.key, "value": float(value), "unit": name.unit}})

    def point(self, series: SeriesName, x: float, y: float) -> None:
        _expect(series, SeriesName)
        axes = {"x_label": series.per, "x_unit": "count", "y_unit": series.unit}
        self.emit({"point": {"series": series.key, "x": float(x), "y": float(y), "axes": axes}})

    def iteration(self, label: str | None) -> None:
        """Starts (a label) or ends (None) one iteration of a loop."""
        self.emit({"iteration": {"label": label}})

    def end(self, error: str | None) -> None:
        self.emit({"end": {"error": error}})

    def panic(self, message: str) -> None:
        self.emit({"panic": {"message": message}})


def reduced_for_sanitizer(rec: Recorder) -> bool:
    """Whether to run the reduced form made for compute-sanitizer (set when
    the variant runs under it); records that it does."""
    reduced = SANITIZER_ENV in os.environ
    if reduced:
        rec.fact(REDUCED, True)
    return reduced


def _expect(name: Any, kind: type) -> None:
    if not isinstance(name, kind):
        raise TypeError(f"expected a {kind.__name__} from names.toml, got {name!r}")
