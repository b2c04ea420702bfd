"""The hierarchy and the dependencies: properties of the search over random diffs and oracles,
and the function level with and without tree-sitter."""

from __future__ import annotations

import fcntl
import os
import pickle
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from diffs import synthetic_diff

from ddchange import git, session
from ddchange.diff import linechanges, read
from ddchange.diff.hunks import line_starts
from ddchange.hierarchy import headers, syntax
from ddchange.hierarchy.grouping import Hierarchy
from ddchange.hierarchy.names import Analysis
from ddchange.model import Outcome
from ddchange.search.hierarchical import minimize
from ddchange.trial.missing import missing_names

Oracle = Callable[[frozenset[str]], Outcome]


def test_interior_drops_units_whose_needs_are_missing_transitively() -> None:
    diff = synthetic_diff([[4]])
    hierarchy = Hierarchy(diff, needs={"0.0.0": {"0.0.1"}, "0.0.1": {"0.0.2"}})
    assert hierarchy.interior({"0.0.0", "0.0.1"}) == frozenset()
    assert hierarchy.interior({"0.0.0", "0.0.1", "0.0.2", "0.0.3"}) == {
        "0.0.0",
        "0.0.1",
        "0.0.2",
        "0.0.3",
    }
    assert hierarchy.interior({"0.0.1", "0.0.2", "0.0.3"}) == {"0.0.1", "0.0.2", "0.0.3"}


@pytest.mark.parametrize(
    ("output", "names"),
    [
        ("main.c:3: undefined reference to `div_round'", {"div_round"}),
        ("fmt.c:9:5: error: implicit declaration of function ‘div_round’", {"div_round"}),
        ("NameError: name 'parse_record' is not defined", {"parse_record"}),
        ("ImportError: cannot import name 'parse_record' from 'm'", {"parse_record"}),
        ("""unexpected error: NameError("name 'tidy' is not defined")""", {"tidy"}),
        (
            "src/main.c:9:10: fatal error: version.h: No such file or directory",
            {"version.h", "version"},
        ),
        ("make: *** No rule to make target 'src/version.c', needed by", {"version.c", "version"}),
        ("all fine", set()),
    ],
)
def test_missing_names_are_read_from_build_output(output: str, names: set[str]) -> None:
    assert missing_names(output) == names


def test_the_function_level_uses_tree_sitter_or_git_headers(
    make_repo: Callable[..., tuple[Path, list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two functions changed in one git hunk: two groups with a grammar; without one, git's
    header (one group per hunk)."""
    old = "def a():\n    return 1\n\ndef b():\n    return 2\n"
    new = "def a():\n    return 10\n\ndef b():\n    return 20\n"
    repo, (good, bad) = make_repo(tmp_path, [{"m.py": old}, {"m.py": new}])
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    assert len({u.hunk for u in diff.hunks}) == 1
    labels = [g.label for g in Hierarchy(diff).groups("function", list(diff.hunks))]
    if syntax.has_grammar("m.py"):
        assert labels == ["m.py: function a", "m.py: function b"]
    monkeypatch.setenv(syntax.NO_SYNTAX_ENV, "1")
    fallback = Hierarchy(diff).groups("function", list(diff.hunks))
    assert len(fallback) == 1


def test_the_commit_level_searches_prefixes_of_history() -> None:
    """With --strategy history, commits come only with every commit before them: the search over
    64 commits is a binary search over prefixes, like `git bisect`."""
    diff = synthetic_diff([[1] * 4 for _ in range(32)])  # 128 units, 2 per commit
    commits = {unit.id: n // 2 for n, unit in enumerate(diff.hunks)}
    culprit = diff.hunks[83].id  # in commit 41
    asked: list[frozenset[str]] = []

    def oracle(config: frozenset[str]) -> Outcome:
        asked.append(config)
        return Outcome.FAIL if culprit in config else Outcome.PASS

    hierarchy = Hierarchy(diff, dependencies=False, commits=commits)
    found = minimize(diff, oracle, levels=["commit"], hierarchy=hierarchy)
    for config in asked:
        newest = max((commits[unit] for unit in config), default=-1)
        assert config == {u for u, c in commits.items() if c <= newest}, "a prefix of history"
    assert found.answer == {u for u, c in commits.items() if c <= 41}
    assert found.tests <= 6  # pinned (measured): log2(64), as many as git bisect needs


def test_a_failed_build_teaches_a_missed_dependency(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """The failure resolution loop: when the analysis missed that a call needs a new function,
    the NameError in the output adds the need, and the configuration's interior drops the call."""
    repo, (good, bad) = make_repo(
        tmp_path,
        [
            {"lib.py": "def old():\n    return 1\n", "app.py": "import lib\n\nprint(lib.old())\n"},
            {
                "lib.py": "def old():\n    return 1\n\n\ndef helper():\n    return 2\n",
                "app.py": "import lib\n\nprint(lib.old(), helper())\n",
            },
        ],
    )
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    call = next(u.id for u in diff.hunks if u.path == "app.py")
    definition = next(u.id for u in diff.hunks if "+def helper():" in u.diff)
    hierarchy = Hierarchy(diff)
    assert hierarchy.needs.get(call) == {definition}, "the analysis sees it ..."
    hierarchy.needs.clear()  # ... so forget it, as if the analysis had missed it
    assert hierarchy.interior({call}) == {call}
    output = "Traceback (most recent call last):\nNameError: name 'helper' is not defined\n"
    assert hierarchy.learn(frozenset({call}), missing_names(output))
    assert hierarchy.interior({call}) == frozenset()
    assert hierarchy.interior({call, definition}) == {call, definition}
    assert hierarchy.learned == 1
    assert not hierarchy.learn(frozenset({call, definition}), missing_names("all fine"))


def _children() -> set[int]:
    tasks = Path(f"/proc/{os.getpid()}/task").glob("*/children")
    return {int(pid) for task in tasks for pid in task.read_text().split()}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="children read from /proc")
def test_the_analysis_made_aside_is_the_one_made_here(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """The session has the analysis of names made by a child process while the pre-flight
    runs: it hands over what the analysis here gives, and no child outlives the block."""
    repo, (good, bad) = make_repo(
        tmp_path,
        [
            {"lib.py": "def old():\n    return 1\n", "app.py": "import lib\n\nlib.old()\n"},
            {"lib.py": "def new():\n    return 1\n", "app.py": "import lib\n\nlib.new()\n"},
        ],
    )
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    here = vars(Analysis(diff))
    assert here["added_defs"], "the example defines something"
    before = _children()
    with session.analysis_aside(diff, wanted=True) as analysis:
        assert len(_children() - before) <= 1  # one child, unless it ended and was reaped
        assert analysis is not None
        assert vars(analysis()) == here
        # Handed over, the child ends, and is reaped while the block goes on: no zombie.
        deadline = time.monotonic() + 10
        while _children() != before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _children() == before
    assert _children() == before
    with session.analysis_aside(diff, wanted=False) as analysis:
        assert analysis is None
        assert _children() == before


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="children read from /proc")
def test_the_analysis_is_made_here_when_the_child_is_killed_before_it_delivers(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """A child killed (SIGKILL) before it has handed its analysis over: the analysis is made
    here instead, the same. 1,500 renamed functions make an analysis larger than a pipe holds,
    so the child cannot have written it all before the analysis is asked for."""
    name = "old_function_with_a_long_name"
    code = "".join(f"def {name}_{n}():\n    return {n}\n\n\n" for n in range(1500))
    repo, (good, bad) = make_repo(
        tmp_path, [{"lib.py": code}, {"lib.py": code.replace("def old_", "def new_")}]
    )
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    here = Analysis(diff)
    reading, writing = os.pipe()
    capacity = fcntl.fcntl(writing, fcntl.F_GETPIPE_SZ)
    os.close(reading)
    os.close(writing)
    assert len(pickle.dumps(here, pickle.HIGHEST_PROTOCOL)) > capacity
    before = _children()
    with session.analysis_aside(diff, wanted=True) as analysis:
        [child] = _children() - before  # blocked on the full pipe at the latest: not reaped
        os.kill(child, signal.SIGKILL)
        assert analysis is not None
        assert vars(analysis()) == vars(here)
    assert _children() == before


def test_a_new_value_for_a_name_does_not_need_the_removal_of_its_uses(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """`SEP = ","` → `SEP = ";"` removes and adds the definition in one unit: the name stays
    defined, so it does not need an unrelated unit that stops using SEP. A real removal does."""
    config = 'SEP = ","\n# between\nOTHER = 1\n'
    export = "from config import SEP, OTHER\n\n\ndef line(cells):\n    return SEP.join(cells)\n"
    repo, (good, bad) = make_repo(
        tmp_path,
        [
            {"config.py": config, "export.py": export},
            {
                "config.py": config.replace('","', '";"').replace("OTHER = 1\n", ""),
                "export.py": export.replace("SEP.join", '",".join').replace(", OTHER", ""),
            },
        ],
    )
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    by_text = {u.diff.splitlines()[1]: u.id for u in diff.hunks}
    needs = Hierarchy(diff).needs
    assert needs.get(by_text['-SEP = ","'], set()) == set(), "a new value needs nothing"
    assert by_text["-from config import SEP, OTHER"] in needs[by_text["-OTHER = 1"]]


def test_a_new_signature_needs_its_callers_and_its_declaration(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """`int pack(int a)` → `int pack(int a, int b)` in the header and the .c file, and a caller
    updated: unlike a new value, a function's header rewritten in place is a new signature, so
    the declaration, the definition and the call are tied together (else "too few arguments",
    "conflicting types")."""
    header = "int pack(int a);\n"
    source = '#include "pack.h"\n\nint pack(int a)\n{\n    return a;\n}\n'
    caller = '#include "pack.h"\n\nint main(void)\n{\n    return pack(1);\n}\n'
    repo, (good, bad) = make_repo(
        tmp_path,
        [
            {"pack.h": header, "pack.c": source, "main.c": caller},
            {
                "pack.h": header.replace("int a)", "int a, int b)"),
                "pack.c": source.replace("int a)", "int a, int b)").replace("a;", "a + b;"),
                "main.c": caller.replace("pack(1)", "pack(1, 2)"),
            },
        ],
    )
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    unit = {u.path + u.diff.splitlines()[1]: u.id for u in diff.hunks}
    declaration, definition = unit["pack.h-int pack(int a);"], unit["pack.c-int pack(int a)"]
    call = unit["main.c-    return pack(1);"]
    needs = Hierarchy(diff).needs
    if not syntax.has_grammar("pack.c"):
        pytest.skip("the C grammar tells functions from values")
    assert {definition, call} <= needs[declaration]
    assert {declaration, call} <= needs[definition]
    assert declaration in needs[call]


def test_docs_and_configuration_neither_define_nor_use_files_as_names(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """An added project file `.idea/pkg.iml` does not define the module name `pkg`, and a
    README line naming `version.h` does not need the change that adds it; a C include does."""
    repo, (good, bad) = make_repo(
        tmp_path,
        [
            {"app.py": "x = 1\n", "README.md": "Docs.\n", "main.c": "int main(void);\n"},
            {
                "app.py": "import pkg\nx = 1\n",
                ".idea/pkg.iml": "<module/>\n",
                "README.md": "Docs. See version.h.\n",
                "version.h": "#define V 1\n",
                "main.c": '#include "version.h"\nint main(void);\n',
            },
        ],
    )
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    unit = {u.path: u.id for u in diff.hunks}
    needs = Hierarchy(diff).needs
    assert unit[".idea/pkg.iml"] not in needs.get(unit["app.py"], set())
    assert unit["version.h"] not in needs.get(unit["README.md"], set())
    assert unit["version.h"] in needs[unit["main.c"]]


def test_an_import_binds_its_name_in_its_own_file_only(
    make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    """A new example file that imports `pkg` is no provider of `pkg` for a test elsewhere."""
    repo, (good, bad) = make_repo(
        tmp_path,
        [
            {"test_a.py": "import pkg\n\n\ndef test():\n    assert pkg\n"},
            {
                "test_a.py": "import pkg\n\n\ndef test():\n    assert pkg.run()\n",
                "examples/demo.py": "import pkg\n\npkg.run()\n",
            },
        ],
    )
    diff = linechanges.split_lines(read.read_diff(git.open_repo(repo), good, bad))
    unit = {u.path: u.id for u in diff.hunks}
    needs = Hierarchy(diff).needs
    assert unit["examples/demo.py"] not in needs.get(unit["test_a.py"], set())


RUBY = "def area\n  a = 1\n  b = 2\n  c = 3\n  w * h\nend\n\n\n\n\nLIMIT = 10\n"


@pytest.mark.parametrize(
    ("new", "scope"),
    [
        # git (its ruby driver) names `def area` for both; only the second is inside it
        (RUBY.replace("LIMIT = 10", "LIMIT = 20"), ""),
        (RUBY.replace("w * h", "w * h * 2"), "def area"),
    ],
    ids=["after-the-definition", "inside-it"],
)
def test_without_a_grammar_the_header_names_only_a_definition_that_holds_the_change(
    new: str, scope: str, make_repo: Callable[..., tuple[Path, list[str]]], tmp_path: Path
) -> None:
    attributes = {".gitattributes": "*.rb diff=ruby\n"}
    repo, (good, bad) = make_repo(
        tmp_path, [{"shape.rb": RUBY, **attributes}, {"shape.rb": new, **attributes}]
    )
    diff = read.read_diff(git.open_repo(repo), good, bad)
    [unit] = diff.hunks
    assert unit.header.strip() == "def area", "git's own header names the previous definition"
    assert Hierarchy(diff).scope(unit.id) == scope


@pytest.mark.parametrize(
    ("content", "first", "held"),
    [
        ("int f(void)\n{\n    x = 1;\n}\n", 3, True),  # Allman brace, then the body
        ("int f(void)\n{\n    x = 1;\n}\nint g = 2;\n", 5, False),  # after the closing brace
        ("int f(void)\n{\n\n\tx = 1;\n", 4, True),  # a blank line and a tab
        ("int f(void)\n{\n    x = 1;\n", 1, False),  # the header's own line is no inside
        ("void g(void)\n{\n    x = 1;\n", 3, False),  # git's header is not there at all
    ],
)
def test_a_header_holds_a_line_when_the_layout_says_so(
    content: str, first: int, held: bool
) -> None:
    data = content.encode()
    held_by = headers.holding("int f(void)", data, line_starts(data), first)
    assert held_by == ("int f(void)" if held else "")


def test_a_block_held_in_part_is_as_many_groups_as_runs() -> None:
    """Four line changes of one block: a configuration without the second holds two runs,
    which the answer's own `git diff -U0` would show as two hunks; whole, it is one group."""
    diff = synthetic_diff([[4]])
    hierarchy = Hierarchy(diff, dependencies=False)
    units = list(diff.hunks)
    assert [g.members for g in hierarchy.groups("block", units)] == [
        ("0.0.0", "0.0.1", "0.0.2", "0.0.3")
    ]
    partial = [units[0], units[2], units[3]]
    assert [g.members for g in hierarchy.groups("block", partial)] == [
        ("0.0.0",),
        ("0.0.2", "0.0.3"),
    ]
