"""`ddchange reduce`: failing inputs reduced by the same engine as changes. Real runs of real
check scripts on files in tmp_path, each result judged apart from ddchange: it fails the check
as the original did, and taking out any one piece of the grain asked makes it pass. The user's
files are never written."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddchange import reduction
from ddchange.diff import inputs
from ddchange.diff.inputs import Edit
from ddchange.hierarchy.syntax import inputs as grammars
from ddchange.model import Grain, Outcome, Rewrite
from ddchange.search.reduce import Pass, Reduced, Reducer

LINES = [f"<p>line {n} of the page</p>" for n in range(900)]
LINES[450] = '<SELECT NAME="priority" MULTIPLE SIZE=7>'
PAGE = "<html><body>\n" + "\n".join(LINES) + "\n</body></html>\n"
# run's rules: exit 1 where the failure is there (a multi-line list box), 0 where it is not
CHECK = "#!/bin/sh\ngrep -q '<SELECT[^>]*MULTIPLE' page.html && exit 1\nexit 0\n"
# C-Vise's: exit 0 where the input is interesting
INTERESTING = "#!/bin/sh\ngrep -q '<SELECT[^>]*MULTIPLE' page.html\n"


def reduce(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`ddchange reduce ARGS` in `cwd`, its journal in cwd's parent."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd.parent / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "ddchange", "reduce", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def page(tmp_path: Path, check: str = CHECK) -> Path:
    here = tmp_path / "work"
    here.mkdir(parents=True)
    (here / "page.html").write_text(PAGE)
    (here / "check.sh").write_text(check)
    (here / "check.sh").chmod(0o755)
    return here


def counted(counter: Path, then: str) -> str:
    """CHECK, after a line that counts its runs in `counter` (as $n) and the line `then`."""
    count = f"n=$(($(cat {counter} 2>/dev/null || echo 0) + 1)); echo $n > {counter}\n"
    return "#!/bin/sh\n" + count + then + "\n" + CHECK.split("\n", 1)[1]


def exits(here: Path, script: str, content: bytes) -> int:
    """The check's exit code on `content` as page.html, in a directory of its own."""
    trial = here.parent / "judge"
    trial.mkdir(exist_ok=True)
    (trial / "page.html").write_bytes(content)
    return subprocess.run(["sh", str(here / script)], cwd=trial, check=False).returncode


def tokens(content: bytes) -> list[bytes]:
    """The judge's own cut into tokens: words, marks, runs of white space."""
    return re.findall(rb"[\w\x80-\xff]+|\s+|[^\w\s\x80-\xff]", content)


def without_each_token(content: bytes) -> list[bytes]:
    """The content with each of its tokens taken out in turn, as the README defines it: a token
    taken out from between two words leaves a space (the two stay two), and white space between
    two words is no token of its own."""
    word = re.compile(rb"[\w\x80-\xff]")
    out = []
    for match in re.finditer(rb"[\w\x80-\xff]+|\s+|[^\w\s\x80-\xff]", content):
        before, after = content[: match.start()], content[match.end() :]
        between = bool(word.fullmatch(before[-1:]) and word.fullmatch(after[:1]))
        if not (between and match.group().isspace()):
            out.append(before + b" " * between + after)
    return out


def test_a_page_comes_down_to_its_list_box_and_the_original_is_untouched(tmp_path: Path) -> None:
    """The Mozilla case as the paper tells it: a 900-line page whose multi-line list box
    fails the check. The result fails it as the original does, and without any one of its
    tokens it passes; page.html keeps its bytes and its time."""
    here = page(tmp_path)
    before = (here / "page.html").stat().st_mtime_ns
    done = reduce(here, "page.html", "--json", "out.json", "--report", "r.html", "--", "./check.sh")
    assert done.returncode == 0, done.stderr
    assert (here / "page.html").read_text() == PAGE
    assert (here / "page.html").stat().st_mtime_ns == before
    result = (here / "page.html.reduced").read_bytes()
    assert exits(here, "check.sh", result) == 1
    for without in without_each_token(result):
        assert exits(here, "check.sh", without) == 0, without
    report = json.loads((here / "out.json").read_text())
    assert report["minimal"] is True
    assert report["outcome"] == "found"
    assert report["files"][0]["bytes"] == [len(PAGE), len(result)]
    assert report["tests_run"] == len(report["log"]) < 120
    assert sum(p["tests"] for p in report["passes"]) + 1 + 3 == report["tests_run"]
    assert "1-minimal in tokens" in done.stdout
    # Each smaller input found, a line with the size and a guess at the tests left, which
    # falls as the input shrinks; the range is the one the estimate's benchmark measures.
    shown = re.findall(
        r"^reduce: ([\d,]+) of [\d,]+ bytes .* about (\d+) tests? left \((\d+)-(\d+), "
        r"8 times in 10\)$",
        done.stderr,
        re.MULTILINE,
    )
    assert len(shown) == len(done.stderr.strip().splitlines()) > 3
    guesses = [int(likely) for _size, likely, _low, _high in shown]
    assert guesses[-1] < max(guesses)
    assert all(int(low) <= int(likely) <= int(high) for _size, likely, low, high in shown)
    html = (here / "r.html").read_text()
    assert html.count('<circle class="mark ') == report["tests_run"]  # one mark a test
    assert f'<pre class="input">{result.decode().replace("<", "&lt;")}</pre>' in html


def test_interesting_exit_0_takes_a_c_vise_script(tmp_path: Path) -> None:
    here = page(tmp_path, INTERESTING)
    done = reduce(here, "page.html", "--interesting-exit", "0", "--granularity", "char",
                  "--", "./check.sh")  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = (here / "page.html.reduced").read_bytes()
    assert exits(here, "check.sh", result) == 0
    for number in range(len(result)):
        assert exits(here, "check.sh", result[:number] + result[number + 1 :]) != 0
    assert "1-minimal in chars" in done.stdout


def test_an_original_that_does_not_fail_is_refused_in_one_line(tmp_path: Path) -> None:
    here = page(tmp_path, "#!/bin/sh\nexit 0\n")
    done = reduce(here, "page.html", "--", "./check.sh")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "pre-flight: the original input should give a failure" in done.stderr
    assert not (here / "page.html.reduced").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("page.html", "./check.sh"), "no command: put it after `--`"),
        (("page.html", "check.sh", "-o", "x", "--", "./check.sh"), "--output takes one FILE"),
        (("nothere.html", "--", "./check.sh"), "nothere.html: no such file"),
        (("page.html", "--", "./check.sh", "--granularity"), None),
    ],
)
def test_usage_errors_take_one_line(
    tmp_path: Path, args: Sequence[str], message: str | None
) -> None:
    here = page(tmp_path)
    done = reduce(here, *args)
    if message is None:  # after `--`, everything is the command's
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert message in done.stderr


def test_in_place_keeps_the_original_as_orig(tmp_path: Path) -> None:
    here = page(tmp_path)
    done = reduce(here, "page.html", "--in-place", "--", "./check.sh")
    assert done.returncode == 0, done.stderr
    assert (here / "page.html.orig").read_text() == PAGE
    assert exits(here, "check.sh", (here / "page.html").read_bytes()) == 1
    assert len((here / "page.html").read_bytes()) < 40


def test_the_same_command_resumes_and_an_interrupted_run_leaves_its_best(tmp_path: Path) -> None:
    """The check stops ddchange (SIGINT) in its 12th run: the best input so far is in
    page.html.reduced, exit 130; the same command then takes every earlier test from the
    journal and ends where an uninterrupted run ends."""
    counter = tmp_path / "count"
    stopping = counted(counter, '[ "$n" = 12 ] && kill -INT $PPID && sleep 5')
    here = page(tmp_path, stopping)
    stopped = reduce(here, "page.html", "--", "./check.sh")
    assert stopped.returncode == 130, stopped.stderr
    assert "interrupted" in stopped.stdout
    best = (here / "page.html.reduced").read_bytes()
    assert exits(here, "check.sh", best) == 1
    assert len(best) < len(PAGE)
    resumed = reduce(here, "page.html", "--json", "again.json", "--", "./check.sh")
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((here / "again.json").read_text())
    assert report["resumed"] == 11  # the 12th was stopped, never recorded
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "page.html").write_text(PAGE)
    (alone / "check.sh").write_text(CHECK)
    (alone / "check.sh").chmod(0o755)
    once = reduce(alone, "page.html", "--json", "once.json", "--", "./check.sh")
    assert once.returncode == 0, once.stderr
    assert (here / "page.html.reduced").read_bytes() == (alone / "page.html.reduced").read_bytes()
    assert (
        report["resumed"] + report["tests_run"]
        == json.loads((alone / "once.json").read_text())["tests_run"]
    )
    again = reduce(here, "page.html", "--", "./check.sh")
    assert again.returncode == 0
    assert "0 tests (" in again.stdout


def test_a_python_module_is_reduced_node_by_node(tmp_path: Path) -> None:
    """A grammar knows .py files: whole statements and definitions go first, and the result
    still fails the way the original does (a ZeroDivisionError, --fail-pattern)."""
    here = tmp_path / "work"
    here.mkdir()
    body = "".join(
        f"def helper_{n}(x):\n    return x * {n} + 1\n\n\nvalue_{n} = helper_{n}({n})\n"
        for n in range(40)
    )
    module = body + "def broken(y):\n    return y / 0\n\n\nprint(broken(value_7))\n"
    (here / "m.py").write_text(module)
    done = reduce(here, "m.py", "--fail-pattern", "ZeroDivisionError", "--json", "r.json",
                  "--", "python3", "m.py")  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = (here / "m.py.reduced").read_text()
    ran = subprocess.run(
        [sys.executable, "-c", result], capture_output=True, text=True, check=False
    )
    assert "ZeroDivisionError" in ran.stderr
    assert len(result) < len(module) // 20
    passes = {p["pass"]: p for p in json.loads((here / "r.json").read_text())["passes"]}
    assert passes["node"]["saved"] > len(module) // 2


# -- the pieces and the pure reducer ------------------------------------------------------------


@given(st.binary(max_size=300))
def test_each_grain_cuts_a_file_into_pieces_that_make_it_up(data: bytes) -> None:
    for cut in (inputs.lines, inputs.chars):
        pieces = inputs.edits(0, cut(data))
        assert b"".join(data[e.start : e.end] for e in pieces) == data
        assert inputs.apply((data,), pieces) == (b"",)
        assert inputs.apply((data,), []) == (data,)
    # Tokens: all but the white space between two words, which stays; a token taken out from
    # between two words leaves a space. So all of them taken out leave white space only, and
    # never fewer words apart than there were.
    pieces = inputs.edits(0, inputs.words(data))
    ends = [0] + [e.end for e in pieces]
    gaps = [data[end : e.start] for end, e in zip(ends, pieces, strict=False)]
    assert all(gap.isspace() for gap in gaps if gap)
    assert all(e.replacement in (b"", b" ") for e in pieces)
    (rest,) = inputs.apply((data,), pieces)
    assert not rest.strip()
    for edit in pieces:
        (without,) = inputs.apply((data,), [edit])
        fewer = 0 if data[edit.start : edit.end].isspace() else 1
        assert inputs.tokens((without,)) == inputs.tokens((data,)) - fewer
    assert data[ends[-1] :] == b""


def test_edits_of_one_file_must_not_overlap() -> None:
    with pytest.raises(ValueError, match="overlap"):
        inputs.apply((b"abcdef",), [Edit(file=0, start=0, end=3), Edit(file=0, start=2, end=4)])
    assert inputs.apply(
        (b"abcdef", b"xy"),
        [Edit(file=0, start=1, end=3, replacement=b"Z"), Edit(file=1, start=0, end=1)],
    ) == (
        b"aZdef",
        b"y",
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "e", " ", "\n", "(", ")"]), min_size=1,
                max_size=60), st.data())  # fmt: skip
def test_the_reducer_ends_1_minimal_at_the_finest_grain(
    chars: list[str], data: st.DataObject
) -> None:
    """Whatever the input and whichever of its tokens the failure needs, the result fails,
    and taking out any one token makes it pass; no input the test did not fail is taken."""
    text = "".join(chars).encode()
    words = [w for w in tokens(text) if not w.isspace()]
    if not words:
        return
    needed = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3, unique=True))

    def test(contents: tuple[bytes, ...], _grain: Grain) -> Outcome:
        seen = [w for w in tokens(contents[0]) if not w.isspace()]
        return Outcome.FAIL if all(n in seen for n in needed) else Outcome.PASS

    def grain(cut):  # type: ignore[no-untyped-def]
        def rounds(contents: tuple[bytes, ...], k: int) -> list[list[inputs.Edit]] | None:
            return [[e] for e in inputs.edits(0, cut(contents[0]))] if k == 0 else None

        return rounds

    passes = (
        Pass(name=Grain.LINE, rounds=grain(inputs.lines)),
        Pass(name=Grain.TOKEN, rounds=grain(inputs.words)),
    )
    reduced = Reducer(test=test, passes=passes, finest=passes[-1]).reduce((text,))
    assert reduced.minimal
    result = reduced.contents
    assert test(result, Grain.TOKEN) is Outcome.FAIL
    for edit in inputs.edits(0, inputs.words(result[0])):
        assert test(inputs.apply(result, [edit]), Grain.TOKEN) is not Outcome.FAIL


def test_rewrites_shorten_names_indentation_space_and_literals_consistently() -> None:
    source = b'def total(items):\n    for item in items:\n        print(item,   "each", 1234)\n'
    names = inputs.renames((source,))
    renamed = {bytes(source[a[0].start : a[0].end]): a[0].replacement for a in names}
    assert renamed[b"items"] == b"a"  # the largest saving first
    assert renamed[b"item"] == b"b"
    assert all(len(new) < len(old) for old, new in renamed.items())
    assert not set(renamed.values()) & {bytes(w) for w in tokens(source)}, "fresh names only"
    everything = inputs.apply((source,), (e for atom in names for e in atom))[0]
    assert b"items" not in everything
    assert tokens(everything).count(b"a") == 2, "every use renamed"
    assert inputs.apply((source,), inputs.dedents((source,))[0])[0] == (
        b'def total(items):\n for item in items:\n  print(item,   "each", 1234)\n'
    )
    spaced = inputs.apply((source,), (e for atom in inputs.spaces((source,)) for e in atom))
    assert b"item, " in spaced[0]
    assert b",   " not in spaced[0]
    short = inputs.apply((source,), (e for atom in inputs.literals((source,)) for e in atom))
    assert short[0].endswith(b'print(item,   "", 0)\n')


def test_indentation_goes_by_depth_closing_the_gaps_removals_left() -> None:
    """Round 0 of the indentation: each line one space a level deep, however wide its levels
    were (a line taken out left a level of 3 under one of 1: it becomes 2); round 1: the
    file's unit, where depth did not go; a file indented with tabs gets no depth rewrite."""
    data = b"for a in b:\n   for c in b:\n     for d in b:\n      e\n   f\n\nx\n"
    by_depth = inputs.dedents((data,))
    assert len(by_depth) == 1, "one rewrite of the whole file"
    assert inputs.apply((data,), by_depth[0])[0] == (
        b"for a in b:\n for c in b:\n  for d in b:\n   e\n f\n\nx\n"
    )
    assert compile(inputs.apply((data,), by_depth[0])[0], "m.py", "exec")
    even = b"if a:\n    if b:\n        c\n"
    assert inputs.apply((even,), inputs.dedents((even,))[0])[0] == b"if a:\n if b:\n  c\n"
    assert inputs.apply((even,), inputs.dedents((even,), by_depth=False)[0])[0] == (
        b"if a:\n if b:\n  c\n"
    )
    assert inputs.dedents((b"if a:\n b\n",)) == [], "already one space a level"
    tabbed = b"if a:\n\tif b:\n\t        c\n"
    assert inputs.dedents((tabbed,)) == []


def test_names_freed_and_indentation_left_uneven_are_tidied_before_the_check() -> None:
    """A module CPython refuses (21 nested loops, 20 at most): the names of the loops that go
    free one-letter names, and the removals leave indentation uneven. The rewrites go again
    once the passes are done (`tidy`), before the check of each token: the result is the
    loops one space a level deep, every name one letter, and 1-minimal in tokens."""
    names = [f"i{d}" for d in range(24)] + [f"n{d}" for d in range(12)]
    body = "".join(f"{'    ' * (d + 1)}for {names[d]} in range(n):\n" for d in range(24))
    data = (
        "import math\n\n" + "".join(f"{n} = {i}\n" for i, n in enumerate(names[24:]))
        + f"def deep(n):\n    total = 0\n{body}{'    ' * 25}total += i23\n    return total\n"
    ).encode()  # fmt: skip

    def test(candidate: Sequence[bytes], _grain: object = None) -> Outcome:
        try:
            compile(candidate[0], "m.py", "exec")
        except SyntaxError as error:
            return Outcome.FAIL if "too many statically nested" in str(error) else Outcome.PASS
        return Outcome.PASS

    assert test((data,)) is Outcome.FAIL
    reduced = by_default("m.py", data, test)
    assert reduced.minimal
    result = reduced.contents[0]
    assert test((result,)) is Outcome.FAIL
    lines = result.decode().splitlines()
    assert [len(line) - len(line.lstrip(" ")) for line in lines] == list(range(len(lines)))
    assert all(len(word) == 1 for word in re.findall(r"[A-Za-z_]\w*", result.decode())
               if word not in ("for", "in"))  # fmt: skip
    for edit in inputs.edits(0, inputs.words(result)):
        assert test(inputs.apply((result,), [edit])) is not Outcome.FAIL


def test_brackets_go_level_by_level_with_their_content_or_are_emptied() -> None:
    data = b"f(a, g(b), [c]) + h()"
    outer = inputs.brackets((data,), 0, keep="")
    assert outer is not None
    assert [data[a[0].start : a[0].end] for a in outer] == [b"(a, g(b), [c])", b"()"]
    emptied = inputs.brackets((data,), 0, keep="brackets")
    assert emptied is not None
    assert [data[a[0].start : a[0].end] for a in emptied] == [b"a, g(b), [c]"]
    unwrapped = inputs.brackets((data,), 1, keep="content")
    assert unwrapped is not None
    assert inputs.apply((data,), unwrapped[0])[0] == b"f(a, gb, [c]) + h()"
    assert inputs.brackets((data,), 2, keep="") is None


def test_two_jobs_give_the_same_result_and_records(tmp_path: Path) -> None:
    """-j 2 starts the inputs the reduction would test next; a run made ahead is a record only
    when asked for, so the log and the result are those of -j 1. Only the check of each piece
    runs ahead, where removals mostly pass: the passes' rounds, whose removals fail about as
    often as not, go one test at a time, so hardly a run is made that was not asked for."""
    logs, runs = [], []
    for jobs in ("1", "2"):
        counter = tmp_path / f"runs-{jobs}"
        here = page(tmp_path / jobs, CHECK.replace("\n", f"\necho run >> {counter}\n", 1))
        done = reduce(here, "page.html", "-j", jobs, "--json", "r.json", "--", "./check.sh")
        assert done.returncode == 0, done.stderr
        report = json.loads((here / "r.json").read_text())
        logs.append(
            (
                (here / "page.html.reduced").read_bytes(),
                [(r["phase"], r["config"], r["outcome"]) for r in report["log"]],
            )
        )
        runs.append((len(counter.read_text().splitlines()), report["tests_run"]))
    assert logs[0] == logs[1]
    assert runs[0][0] == runs[0][1]  # -j 1: every run is a test asked for
    # -j 2: a run made ahead and not asked for follows a removal of the check that failed (the
    # input it was made for is no longer the result); none follows a test of the rounds
    checked = [r for r in logs[1][1] if r[0] in {Grain.TOKEN.value, Rewrite.JOIN.value}]
    assert 0 < runs[1][0] - runs[1][1] <= sum(r[2] == "fail" for r in checked)


def test_a_large_input_goes_by_runs_of_lines_first(tmp_path: Path) -> None:
    """11 MB, 300,000 lines, one of them needed: runs of consecutive lines first (at most
    1,024 atoms in play), then the lines of the run kept, then its tokens."""
    here = tmp_path / "work"
    here.mkdir()
    lines = [f"{n:08d} some filler text here {n * 7919 % 1000003}" for n in range(300_000)]
    lines[123_456] = "the NEEDLE is here"
    (here / "big.txt").write_text("\n".join(lines) + "\n")
    (here / "c.sh").write_text("#!/bin/sh\ngrep -q NEEDLE big.txt\n")
    (here / "c.sh").chmod(0o755)
    done = reduce(here, "big.txt", "--interesting-exit", "0", "--json", "r.json", "--", "./c.sh")
    assert done.returncode == 0, done.stderr
    result = (here / "big.txt.reduced").read_bytes()
    assert b"NEEDLE" in result
    assert len(tokens(result)) == 1  # spaces taken out can join words: one token holds it
    report = json.loads((here / "r.json").read_text())
    assert report["tests_run"] < 80
    assert report["minimal"] is True


def test_killed_with_sigkill_it_resumes_and_leaves_no_scratch_directory(tmp_path: Path) -> None:
    """SIGKILL in the 9th test: the original keeps its bytes, and the same command cleans up
    the dead run's scratch directory, takes its 8 tests from the journal and ends with what a
    run never killed gives."""
    counter = tmp_path / "count"
    killing = counted(counter, '[ "$n" = 9 ] && kill -KILL $PPID && sleep 5')
    here = page(tmp_path, killing)
    killed = reduce(here, "page.html", "--", "./check.sh")
    assert killed.returncode == -9
    assert (here / "page.html").read_text() == PAGE
    dead = [p for p in Path(tempfile.gettempdir()).glob("ddchange-reduce-*") if _dead(p)]
    assert dead, "the killed run left its scratch directory"
    resumed = reduce(here, "page.html", "--json", "r.json", "--", "./check.sh")
    assert resumed.returncode == 0, resumed.stderr
    assert not any(path.exists() for path in dead)
    assert json.loads((here / "r.json").read_text())["resumed"] == 8
    assert exits(here, "check.sh", (here / "page.html.reduced").read_bytes()) == 1


def _dead(path: Path) -> bool:
    pid = int(path.name.removeprefix("ddchange-reduce-").split("-")[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_check_that_fails_at_random_is_reduced_past_not_given_up(tmp_path: Path) -> None:
    """Every 4th run of the check fails whatever the input (a FAIL at random): the reduction it
    misleads ends in a result that passes when run again, and the reduction goes again with
    each FAIL run twice; the result holds the list box and is 1-minimal in tokens (exit 5)."""
    counter = tmp_path / "count"
    flaky = counted(counter, "[ $((n % 4)) = 0 ] && exit 1")
    here = page(tmp_path, flaky)
    done = reduce(here, "page.html", "--json", "r.json", "--", "./check.sh")
    assert done.returncode == 5, done.stdout + done.stderr
    result = (here / "page.html.reduced").read_bytes()
    assert exits(here, "check.sh", result) == 1
    assert b"SELECT" in result
    assert b"MULTIPLE" in result
    report = json.loads((here / "r.json").read_text())
    assert report["disagreed"] is True
    assert report["minimal"] is True
    assert "failed at random" in done.stdout


@pytest.mark.parametrize("name", ["reduce-text", "reduce-python"])
def test_the_bundled_inputs_reduce_to_their_expected_results(tmp_path: Path, name: str) -> None:
    """`ddchange demo reduce-text` (plain text) and `reduce-python` (node by node): each
    result is the scenario's, and nothing is left behind."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "ddchange", "demo", "-q", name],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "The result matches the scenario's expected result." in done.stdout
    assert not list(tmp_path.glob("ddchange-demo-*"))


def test_node_granularity_needs_a_grammar(tmp_path: Path) -> None:
    here = page(tmp_path)
    (here / "page.txt").write_text(PAGE)
    done = reduce(here, "page.txt", "--granularity", "node", "--", "./check.sh")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "no grammar knows page.txt" in done.stderr


def test_an_in_place_run_stopped_is_resumed_from_its_orig(tmp_path: Path) -> None:
    """--in-place, stopped: page.html holds the best so far and page.html.orig the original.
    The same command refuses to take the partial result for an original (one line); moving
    page.html.orig back resumes the first run from the journal."""
    counter = tmp_path / "count"
    stopping = counted(counter, '[ "$n" = 12 ] && kill -INT $PPID && sleep 5')
    here = page(tmp_path, stopping)
    assert reduce(here, "page.html", "--in-place", "--", "./check.sh").returncode == 130
    assert (here / "page.html.orig").read_text() == PAGE
    refused = reduce(here, "page.html", "--in-place", "--", "./check.sh")
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "mv page.html.orig page.html" in refused.stderr
    (here / "page.html.orig").rename(here / "page.html")
    done = reduce(here, "page.html", "--in-place", "--json", "r.json", "--", "./check.sh")
    assert done.returncode == 0, done.stderr
    assert json.loads((here / "r.json").read_text())["resumed"] == 11
    assert (here / "page.html.orig").read_text() == PAGE


def test_several_files_are_reduced_together_at_their_paths(tmp_path: Path) -> None:
    """The failure needs a line of a.txt and one of sub/b.txt: both files are reduced in one
    run, each at its relative path in the scratch directory, each result beside its file."""
    here = tmp_path / "work"
    (here / "sub").mkdir(parents=True)
    (here / "a.txt").write_text("".join(f"alpha {n}\n" for n in range(200)) + "KEY one\n")
    (here / "sub" / "b.txt").write_text("LOCK two\n" + "".join(f"beta {n}\n" for n in range(200)))
    check = "#!/bin/sh\ngrep -q KEY a.txt && grep -q LOCK sub/b.txt && exit 1\nexit 0\n"
    (here / "check.sh").write_text(check)
    (here / "check.sh").chmod(0o755)
    done = reduce(here, "a.txt", "sub/b.txt", "--", "./check.sh")
    assert done.returncode == 0, done.stderr
    for path, word in ((here / "a.txt.reduced", b"KEY"), (here / "sub" / "b.txt.reduced", b"LOCK")):
        result = path.read_bytes()
        assert word in result
        assert len(tokens(result)) == 1  # a word that holds it: a space taken out joins two


def by_default(name: str, data: bytes, test: Callable[..., Outcome]) -> Reduced:
    """`data`, a file called `name`, reduced in process as `ddchange reduce` does by default
    (token grain; candidates kept well formed), with `test` as its check."""
    passes, finest, tidy, last = reduction.passes_for(Grain.TOKEN, (name,))
    plausible = reduction._well_formed((name,), (data,))
    reducer = Reducer(
        test=test, passes=passes, finest=finest, tidy=tidy, last=last, plausible=plausible
    )
    return reducer.reduce((data,))


def test_a_child_the_grammar_requires_is_no_piece_of_the_node_pass() -> None:
    """Perses takes out only optional children. An object's keys, an element's start tags and
    an attribute's name and value are the grammar's: every parent of their kind has exactly one,
    and the file without one does not parse. They are not pieces of their level (a level that
    holds only such children has none, and the levels below still go); a child that every
    parent has once but the grammar does without (a JSON value, the text of an element) is."""
    data = b'[{"a": 1, "b": [2]}, {"c": 3}]\n'
    assert grammars.parses("a.json", data.replace(b'"a"', b"", 1)) is False
    spans = grammars.nodes_at("a.json", data, 4)
    assert spans is not None
    assert [data[slice(*span)] for span in spans] == [b"1", b"[2]", b"3"]  # no key
    page = b'<p class="x" id="y">one</p>\n<p title="z">two</p>\n'
    spans = grammars.nodes_at("a.html", page, 2)
    assert spans is not None
    assert [page[slice(*span)] for span in spans] == [b"one", b"</p>", b"two", b"</p>"]
    assert grammars.nodes_at("a.html", page, 4) == []  # names and values: the attributes'
    spans = grammars.nodes_at("a.html", page, 5)
    assert spans is not None
    assert [page[slice(*span)] for span in spans] == [b"x", b"y", b"z"]
    broken = page.replace(b"</p>\n<p", b"</p>\n<<p", 1)  # no tree without an error: no such kind
    spans = grammars.nodes_at("a.html", broken, 4)
    assert spans is not None
    assert [broken[slice(*span)] for span in spans] == [
        b"class", b'"x"', b"id", b'"y"', b"title", b'"z"'
    ]  # fmt: skip


def test_list_elements_go_with_their_commas_and_lines_with_their_nodes() -> None:
    """A JSON lines log whose checker needs two of its 400 events: the node pass takes out
    whole lines (no blank line left) and the pairs of an object with their commas, so the
    result is two short objects, each valid JSON, in few tests."""
    events = [
        json.dumps({"event": "open" if n in (120, 333) else "read", "session": "s", "n": n})
        for n in range(400)
    ]
    data = ("\n".join(events) + "\n").encode()
    assert grammars.nodes_at("e.jsonl", data, 1) == [
        (start, start + len(line) + 1)
        for start, line in zip(
            [sum(len(e) + 1 for e in events[:k]) for k in range(400)], events, strict=True
        )
    ]
    spans = grammars.nodes_at("e.jsonl", data, 2)
    assert spans is not None
    assert data[slice(*spans[0])] == b'"event": "read",'
    assert data[slice(*grammars.lasts_at("e.jsonl", data, 2)[0])] == b', "n": 0'
    tests = []

    def test(contents: tuple[bytes, ...], _grain: Grain | object) -> Outcome:
        tests.append(contents)
        try:
            objects = [json.loads(line) for line in contents[0].splitlines() if line.strip()]
            opened = [o["session"] for o in objects if o["event"] == "open"]
        except (ValueError, KeyError, TypeError):
            return Outcome.PASS
        return Outcome.FAIL if len(opened) > len(set(opened)) else Outcome.PASS

    reduced = by_default("e.jsonl", data, test)
    lines = reduced.contents[0].splitlines()
    assert [json.loads(line) for line in lines] == [{"event": "open", "session": "s"}] * 2
    assert reduced.minimal
    assert len(set(tests)) < 200  # each input once: the journal answers a repeat


def test_a_node_is_replaced_by_a_descendant_of_another_kind_once_it_is_small() -> None:
    """A node may stand as a smaller descendant of another kind where the file still parses:
    in C, `a = f()` as `f()`. A check that needs `print *= ...` anywhere in a module: a method
    of many statements cannot stand as one of them while it is large, but once the finer
    passes have shrunk it to `def a(self):print*=b`, the node pass goes once more, and the
    class and the function give way to that statement: 4 tokens are left."""
    c = b"int f(void);\nvoid g(void) {\n  int a;\n  a = f();\n}\n"
    hoists = [
        (c[start:end], c[inner:last])
        for depth in range(1, 8)
        for start, end, inner, last in grammars.hoists_at("p.c", c, depth)
    ]
    assert (b"a = f()", b"f()") in hoists
    module = "class T:\n" + "".join(
        f"    def test_{n}(self):\n        x = {n}\n        y = x + 1\n"
        + ("        print *= factor\n" if n == 3 else "")
        + "        return y\n\n"
        for n in range(8)
    )

    def test(contents: tuple[bytes, ...], _grain: Grain | object) -> Outcome:
        try:
            tree = ast.parse(contents[0])
        except (SyntaxError, ValueError):
            return Outcome.PASS
        found = any(
            isinstance(node, ast.AugAssign) and getattr(node.target, "id", "") == "print"
            for node in ast.walk(tree)
        )
        return Outcome.FAIL if found else Outcome.PASS

    reduced = by_default("m.py", module.encode(), test)
    assert reduced.minimal
    assert len(tokens(reduced.contents[0].strip())) == 4, reduced.contents


def test_words_are_joined_last_where_the_failure_stays() -> None:
    """The Mozilla page's check: a line with `<SELECT` and `MULTIPLE`. Once the result is
    1-minimal in tokens (`<SELECT MULTIPLE`), the space between the two words goes too, and
    they are one token: `<SELECTMULTIPLE`, as a reducer of characters leaves it; the join pass
    saved that byte, and the token check ran again after it. In a Python module that still
    parses, joining `def f` is not worth a test: the grammar says no."""
    page = b"<html><body>\n<p>Pick one</p>\n<SELECT MULTIPLE NAME=a>\n</body></html>\n"
    seen: list[Grain | object] = []

    def test(contents: tuple[bytes, ...], grain: Grain | object) -> Outcome:
        seen.append(grain)
        lines = contents[0].splitlines()
        return (
            Outcome.FAIL
            if any(b"<SELECT" in s and b"MULTIPLE" in s for s in lines)
            else (Outcome.PASS)
        )

    reduced = by_default("page.html", page, test)
    assert reduced.contents == (b"<SELECTMULTIPLE",)
    assert reduced.minimal
    assert reduced.saved[Rewrite.JOIN] == 1
    assert seen[-1] is Grain.TOKEN  # the check of each token, after the join
    module = b"import os\n\ndef f():\n    return os.sep\n"
    seen.clear()

    def defines(contents: tuple[bytes, ...], grain: Grain | object) -> Outcome:
        seen.append(grain)
        try:
            tree = ast.parse(contents[0])
        except (SyntaxError, ValueError):
            return Outcome.PASS
        return (
            Outcome.FAIL
            if any(isinstance(n, ast.FunctionDef) for n in tree.body)
            else (Outcome.PASS)
        )

    reduced = by_default("m.py", module, defines)
    assert reduced.contents[0].startswith(b"def ")
    assert reduced.minimal
    assert Rewrite.JOIN not in seen  # `deff` would not parse: no test


def test_a_digit_the_input_refused_as_0_goes_once_removals_let_it_and_frees_a_node() -> None:
    """clang 14 crashes dumping a struct of two bit-fields, or of one of width 0; a named field
    of width 0 is a compile error (llvm-project#54462, as reduce_peers.py's C input has it).
    While the fields have names, no width can be 0; once the token check took the names out,
    the literals go again (a 3 as 0: as many bytes, first in byte order), and the syntax
    nodes' pass after them takes out the field that width 0 made needless."""
    data = (
        b"struct s { unsigned armed : 1; unsigned mode : 3; };\n"
        b"void show(void) { struct s v; dump(&v); }\n"
    )

    def test(contents: tuple[bytes, ...], _grain: object = None) -> Outcome:
        words = re.findall(rb"\w+|\S", contents[0])
        if words[:3] != [b"struct", b"s", b"{"] or b"}" not in words or b"dump" not in words:
            return Outcome.PASS
        body = words[words.index(b"{") + 1 : words.index(b"}")]
        fields = b" ".join(body).split(b";")
        fields = fields[:-1] if len(fields) > 1 and not fields[-1] else fields
        shapes = [re.fullmatch(rb" ?unsigned (\w+ )?: (\d+) ?", f) for f in fields]
        if not all(shapes):
            return Outcome.PASS  # not a struct of bit-fields: a compile error
        widths = [(m.group(1), int(m.group(2))) for m in shapes if m]
        if any(name and width == 0 for name, width in widths):
            return Outcome.PASS  # a named field of width 0: a compile error
        crashes = len(widths) >= 2 or any(width == 0 for _, width in widths)
        return Outcome.FAIL if crashes else Outcome.PASS

    assert test((data,)) is Outcome.FAIL
    reduced = by_default("s.c", data, test)
    result = reduced.contents[0]
    assert reduced.minimal
    assert test((result,)) is Outcome.FAIL
    assert re.findall(rb"unsigned\s*:\s*(\d+)", result) == [b"0"], result
    for edit in inputs.edits(0, inputs.words(result)):
        assert test(inputs.apply((result,), [edit])) is not Outcome.FAIL


def test_an_edited_check_is_another_reduction_none_of_its_runs_taken_over(tmp_path: Path) -> None:
    """The same command after the check script was edited: the runs of the old check answer
    nothing (it may keep other inputs), so the reduction tests again, and its result holds
    what the new check asks; the same command once more, check unchanged, resumes."""
    here = page(tmp_path)
    first = reduce(here, "page.html", "--json", "r.json", "--", "./check.sh")
    assert first.returncode == 0, first.stderr
    assert json.loads((here / "r.json").read_text())["resumed"] == 0
    stricter = "#!/bin/sh\ngrep -q '<SELECT[^>]*MULTIPLE SIZE' page.html && exit 1\nexit 0\n"
    (here / "check.sh").write_text(stricter)
    second = reduce(here, "page.html", "--json", "r.json", "--", "./check.sh")
    assert second.returncode == 0, second.stderr
    assert json.loads((here / "r.json").read_text())["resumed"] == 0
    assert b"MULTIPLE SIZE" in (here / "page.html.reduced").read_bytes()
    again = reduce(here, "page.html", "--json", "r.json", "--", "./check.sh")
    assert again.returncode == 0, again.stderr
    report = json.loads((here / "r.json").read_text())
    assert report["resumed"] > 0
    assert report["tests_run"] == 0


@given(st.lists(st.binary(max_size=40), max_size=3))
def test_tokens_are_counted_as_the_token_pattern_finds_them(contents: list[bytes]) -> None:
    """The count of tokens (marks, and words with non-ASCII bytes as word bytes) that never
    makes the tokens, against the pattern's own matches."""
    assert inputs.tokens(tuple(contents)) == sum(len(inputs._SOLID.findall(d)) for d in contents)
