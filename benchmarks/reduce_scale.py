"""`ddchange reduce` on large inputs: when its first test starts, and its own time per test.

    .venv/bin/python benchmarks/reduce_scale.py [--sizes 1,10,50]   # rewrites its section

Each input is a text file of about N MB: numbered lines of words, one of which, in the
middle, holds `NEEDLE`; the check (a shell script, exit 1 while the needle is there, as
`git bisect run` would take it) writes the time it starts to a file outside the scratch
directory, then greps. The console script of this checkout (`.venv/bin/ddchange`) reduces it
with the default options (token grain, the journal empty: an XDG_CACHE_HOME of its own), and
this script reads its `--json` report:
- `first test after s`: from the start of the `ddchange reduce` process to the start of the
  first run of the check (Python's start, reading the file, the journal, the pre-flight's
  scratch directory);
- `test s`: the time the checks took, each measured by ddchange around the command;
- `ddchange s/test`: the rest of the wall time over the tests run, which stays flat as the
  input grows only where ddchange's work per test does not follow the input's size;
- `after the first`: the same without the time before the first test (the one-off costs of
  reading and hashing the input, which follow its size whatever the search does).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import results

HEADING = "## Large inputs (`benchmarks/reduce_scale.py`)"
CHECK = """#!/bin/sh
date +%s.%N >> {stamps}
grep -q NEEDLE big.txt && exit 1
exit 0
"""


@dataclass(frozen=True, kw_only=True)
class Measured:
    megabytes: int
    size: int
    lines: int
    result: bytes
    minimal: bool
    tests: int
    first: float
    wall: float
    test_time: float

    def row(self) -> str:
        own = (self.wall - self.test_time) / self.tests
        after = (self.wall - self.first - self.test_time) / self.tests
        return (
            f"| {self.megabytes} | {self.size:,} | {self.lines:,} | `{self.result.decode()}` | "
            f"{'yes' if self.minimal else 'no'} | {self.tests} | {self.first:.2f} | "
            f"{self.wall:.1f} | {self.test_time:.1f} | {own:.3f} | {after:.3f} |"
        )


def make_input(path: Path, megabytes: int) -> tuple[int, int]:
    """About `megabytes` MB of numbered lines, `NEEDLE` on the middle one: (bytes, lines)."""
    line = "line {:07d}: the quick brown fox jumps over the lazy dog again and again\n"
    count = megabytes * 1_000_000 // len(line.format(0))
    with path.open("w") as out:
        for number in range(count):
            out.write(line.format(number) if number != count // 2 else "NEEDLE here\n")
    return path.stat().st_size, count


def measure(ddchange: Path, megabytes: int, work: Path) -> Measured:
    here = work / f"{megabytes}mb"
    here.mkdir()
    size, lines = make_input(here / "big.txt", megabytes)
    stamps = work / f"{megabytes}mb.stamps"
    (here / "check.sh").write_text(CHECK.format(stamps=stamps))
    (here / "check.sh").chmod(0o755)
    report = work / f"{megabytes}mb.json"
    env = {**os.environ, "XDG_CACHE_HOME": str(work / f"{megabytes}mb.cache")}
    command = [str(ddchange), "reduce", "big.txt", "--json", str(report), "-q", "--", "./check.sh"]
    started = time.time()
    done = subprocess.run(command, cwd=here, env=env, capture_output=True, text=True)
    wall = time.time() - started
    if done.returncode != 0:
        sys.exit(f"ddchange reduce exited {done.returncode} on {megabytes} MB: {done.stderr}")
    data = json.loads(report.read_text())
    first = min(float(s) for s in stamps.read_text().split())
    return Measured(
        megabytes=megabytes,
        size=size,
        lines=lines,
        result=(here / "big.txt.reduced").read_bytes(),
        minimal=bool(data["minimal"]),
        tests=int(data["tests_run"]),
        first=first - started,
        wall=wall,
        test_time=sum(float(r["duration"]) for r in data["log"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,50", help="MB, comma-separated")
    args = parser.parse_args()
    ddchange = results.CHECKOUT / ".venv" / "bin" / "ddchange"
    stamped = results.stamp_of(results.command_checkout(ddchange))
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="ddchange-reduce-scale-") as where:
        rows = [measure(ddchange, mb, Path(where)).row() for mb in sizes]
    body = "\n".join(
        [
            f"One run of each on {platform.machine()}, {os.cpu_count()} cores, "
            f"{platform.system()}: `.venv/bin/python benchmarks/reduce_scale.py --sizes "
            f"{args.sizes}`. A text file of numbered lines, `NEEDLE` on the middle one; the "
            "check greps for it (exit 1: the failure is there) and notes when it starts. "
            "`first test after s`: from the start of `ddchange reduce` to the start of the first "
            "run of the check; `test s`: the time inside the checks; `ddchange s/test`: the rest "
            "of the wall time per test, the one-off costs (reading and hashing the input, "
            "writing each candidate) included; `after the first`: the same from the first "
            "test's start on (the time before it left out).",
            "",
            "| MB | bytes | lines | result | 1-minimal | tests | first test after s | wall s "
            "| test s | ddchange s/test | after the first |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    results.write_section(HEADING, body, stamped=stamped)
    print(body)


if __name__ == "__main__":
    main()
