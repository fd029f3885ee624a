"""Instructions per search, counted by valgrind: a figure for the plain AVX2 path.

A wall-clock benchmark measures the machine it runs on. Valgrind runs the
program on its own CPU, which has AVX2 and no AVX-512 (VEX implements no
further), so NumKong takes its ``haswell`` kernels and onnxruntime its AVX2
ones whatever the host has; and it counts instructions, which repeat from
run to run (within 0.1% here) whatever else the machine does. So two
versions of the search can be compared on the AVX2 path from any x86 host.
Instructions are not time: the figure ranks changes, it does not replace
``halls bench perf`` on an AVX2 machine.

It builds (once) a store of ``--memories`` memories from the ``halls bench
perf`` corpus with the default embedder, then runs itself under ``valgrind
--tool=callgrind`` twice, with 0 and with ``--searches`` searches after 10
warm-ups, the clock and the hash seed fixed, and prints the difference per
search (the store's opening and the model's loading cancel out):

    python scripts/search_instructions.py --memories 10000 --searches 100

Needs valgrind (Debian's package ``valgrind``). A run takes ~2 minutes at
10,000 memories (both counts run at once).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from halls import Memory, Settings
from halls.bench.corpus import memories, questions
from halls.models import NewShort

STORE = "bench"
WARMUP = 10
NOW = 1_795_000_000.0  # a fixed clock: strength, and so the work, does not move
_COLLECTED = re.compile(r"Collected\s*:\s*([\d,]+)")


def build(data_dir: Path, n: int) -> None:
    memory = Memory(Settings(data_dir=data_dir))
    try:
        rng = random.Random(7)
        for start in range(0, n, 500):
            batch = memories(rng, min(500, n - start))
            memory.remember_many([NewShort(content=c) for c in batch], store=STORE)
    finally:
        memory.close()


def searches(data_dir: Path, n: int) -> None:
    """The program valgrind counts: open the store, warm up, then ``n`` searches."""
    memory = Memory(Settings(data_dir=data_dir), clock=lambda: NOW)
    try:
        asked = questions(random.Random(8), WARMUP + n)
        for q in asked:
            memory.search(q, store=STORE, reinforce=False)
    finally:
        memory.close()


def count(data_dir: Path, n: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/callgrind.out",
                sys.executable,
                __file__,
                "--inner",
                str(n),
                "--data-dir",
                str(data_dir),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=False,
        )
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--data-dir", type=Path, help="reuse (or build) the store here")
    parser.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner is not None:
        searches(args.data_dir, args.inner)
        return
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="halls-instr-"))
    if not (data_dir / f"{STORE}.sqlite3").exists():
        print(f"building {args.memories:,} memories in {data_dir}", file=sys.stderr)
        build(data_dir, args.memories)
    with ThreadPoolExecutor(2) as pool:
        none, some = pool.map(lambda k: count(data_dir, k), [0, args.searches])
    per = (some - none) / args.searches
    print(f"{per / 1e6:.2f} M instructions a search ({args.searches} searches, {data_dir})")


if __name__ == "__main__":
    main()
