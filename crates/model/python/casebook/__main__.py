"""``python3 -m casebook <file> <function>``: runs one Python variant in this
process, as the harness starts it, and records how it ended.

Exit codes match the Rust child's: 0 when the variant ran to its end or
returned on a recorded call's error, 101 when it raised anything else (a
panic), 64 when the file or function cannot be found.
"""

import importlib
import os
import sys
import traceback

from casebook import Recorded, Recorder

PANIC_EXIT = 101
UNKNOWN_TARGET_EXIT = 64


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python3 -m casebook <file.py> <function>", file=sys.stderr)
        return UNKNOWN_TARGET_EXIT
    path, function = argv[1], argv[2]
    rec = Recorder()
    # Imported by its file name from its own folder, so that a process it
    # starts with multiprocessing's spawn can import it again.
    folder, file = os.path.split(os.path.abspath(path))
    stem, ext = os.path.splitext(file)
    if ext != ".py" or not os.path.isfile(path):
        print(f"cannot load {path}: not a Python file", file=sys.stderr)
        return UNKNOWN_TARGET_EXIT
    sys.path.insert(0, folder)
    module = importlib.import_module(stem)
    run = getattr(module, function, None)
    if not callable(run):
        print(f"{path} has no function {function}", file=sys.stderr)
        return UNKNOWN_TARGET_EXIT
    try:
        run(rec)
    except Recorded as e:
        rec.end(str(e).splitlines()[0])
        return 0
    except BaseException as e:  # a variant's bug of any kind is recorded
        traceback.print_exc()
        rec.panic(f"{type(e).__name__}: {e}".splitlines()[0])
        return PANIC_EXIT
    rec.end(None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
