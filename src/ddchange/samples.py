"""Bundled sample scenarios: turning a scenario under `sample_repos/` into a real git repository.

Owns the scenario format and the builder that `ddchange demo` and the tests use. A scenario is a
directory `sample_repos/<name>/` with a `scenario.toml` (description, GOOD and BAD tags, test and
build commands, the commits, and the exact expected answer) and `commits/<NN>/`, one *overlay* per
commit: the files in an overlay are written byte for byte over the previous tree.

History may branch and merge. A `[[commit]]` goes on the branch of the commit before it (the first
one on `main`) unless it says `branch = "name"`: an existing branch is checked out, a new one is
created at `from = "<tag or branch>"`, which a new branch needs and an existing one must not have.
A commit with `merge = "<branch or tag>"` merges that ref into its branch (`git merge --no-ff
--no-commit`); its overlay, optional there, is then written over the merge result, for example to
resolve a conflict, and the result is committed like any other commit. A conflict that the overlay
does not overwrite is an error. The build ends with `main` checked out.

A scenario with a whole test suite to triage says where each run writes its per-test outcomes
(`results = ["junit:report.xml"]`, one `--results` spec of `ddchange` each) and has no single
answer: each `[[cause]]` names the targets it breaks (`tests`, the ids of tests that pass at GOOD
and fail at BAD) and that cause's expected answer (`[[cause.expected]]`, shaped like
`[[expected]]`). Such a scenario may leave `[[expected]]` out; any other needs it. The causes'
targets are disjoint.

Key idea: a build is a pure function of the scenario. Every commit gets a pinned author, committer
and date, and git runs (through the repository-building functions of `ddchange.git`) with an
environment and configuration of its own (no inherited `GIT_DIR`, no user or system config, no
hooks or templates), so building a scenario twice, on any machine, gives the same commit SHAs.
That is what lets tests and the demo name commits and hunks exactly.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddchange import git
from ddchange.errors import UnknownScenario
from ddchange.model import Level, ReduceRequest, Request, Result, SuiteResult
from ddchange.runs import absolute_arguments

SCENARIO_FILE = "scenario.toml"
# What `ddchange demo` runs without a name: it needs nothing but python3.
DEFAULT = "wrong-line"

# 2024-01-01 12:00:00 UTC. Commit k of a scenario is dated k days later, so dates increase.
_EPOCH = 1_704_110_400
_DAY = 86_400

_IDENTITY = re.compile(r"^(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]+)>$")


@dataclass(frozen=True)
class Expected:
    """One unit of the expected answer: the hunk of `path` whose diff text contains `line`.

    `line` keeps its `+`, `-` or space prefix and occurs once among all hunks of GOOD..BAD.
    """

    path: str
    line: str


@dataclass(frozen=True)
class Cause:
    """One cause of a suite's failures: the target tests it breaks and its expected answer."""

    tests: tuple[str, ...]
    expected: tuple[Expected, ...]
    # Its answer inside its tests' first bad commit, where the triage goes inside it and that
    # answer differs from `expected`, the whole range's (--strategy diff): `[[cause.inside]]`
    inside: tuple[Expected, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Commit:
    """One commit of a scenario, made in order: the overlay `dir` committed on `branch`.

    `start` is set when the commit creates `branch` (the ref it starts at), `merge` when the
    commit merges that ref into `branch`; only a merge may do without an overlay (`dir` None).
    """

    dir: str | None
    message: str
    author: str
    branch: str = "main"
    start: str | None = None
    merge: str | None = None
    tag: str | None = None
    delete: tuple[str, ...] = ()
    executable: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """A scenario as read from `scenario.toml`; `source` is its directory."""

    name: str
    description: str
    good: str
    bad: str
    test: tuple[str, ...]
    build: str | None
    timeout: float | None
    expected: tuple[Expected, ...]
    source: Path
    commits: tuple[Commit, ...]
    results: tuple[str, ...] = ()
    causes: tuple[Cause, ...] = ()
    # The answer of the default search where it goes inside the first bad commit and that
    # answer differs from `expected`, the whole range's (--strategy diff): `[[inside]]`,
    # shaped like `[[expected]]`; empty where the two are the same.
    inside: tuple[Expected, ...] = ()


@dataclass(frozen=True, kw_only=True)
class InputScenario:
    """A bundled input to reduce (`sample_inputs/<name>/`): its files, the test, and the exact
    result of the reduction, as read from its `scenario.toml`."""

    name: str
    description: str
    source: Path  # its directory: the files, the check script, scenario.toml
    files: tuple[str, ...]
    test: tuple[str, ...]
    fail_pattern: str | None
    expected: bytes  # the first file's result


def input_root() -> Path:
    """Where the bundled inputs live: `sample_inputs/`, shipped as `sample_repos/` is."""
    here = Path(__file__).resolve().parent
    installed = here / "sample_inputs"
    return installed if installed.is_dir() else here.parent.parent / "sample_inputs"


def input_names() -> tuple[str, ...]:
    root = input_root()
    return tuple(sorted(p.name for p in root.iterdir() if (p / SCENARIO_FILE).is_file()))


def load_input(name: str) -> InputScenario:
    """The bundled input called `name`."""
    source = input_root() / name
    data = tomllib.loads((source / SCENARIO_FILE).read_text(encoding="utf-8"))
    return InputScenario(
        name=name,
        description=str(_required(source, data, "description")),
        source=source,
        files=tuple(str(f) for f in _list(source, data, "files", required=True)),
        test=tuple(str(a) for a in _list(source, data, "test", required=True)),
        fail_pattern=_optional(data, "fail_pattern"),
        expected=str(_required(source, data, "expected")).encode(),
    )


def reduce_request(scenario: InputScenario, directory: Path) -> ReduceRequest:
    """The request that reduces `scenario`'s files copied into `directory` (its check there
    too), as `ddchange reduce` run in that directory makes it."""
    files = tuple(directory / name for name in scenario.files)
    test = absolute_arguments(scenario.test, directory, files)
    return ReduceRequest(files=files, root=directory, test=test, fail_pattern=scenario.fail_pattern)


def scenario_root() -> Path:
    """Where the bundled scenarios live: `sample_repos/` at the top of a source checkout,
    which the wheel ships next to this module (pyproject.toml's force-include), so that an
    installed `ddchange demo` has them as much as a checkout does."""
    here = Path(__file__).resolve().parent
    installed = here / "sample_repos"
    return installed if installed.is_dir() else here.parent.parent / "sample_repos"


def request(scenario: Scenario, repo: Path) -> Request:
    """The search a user would ask for on a repository built from `scenario`."""
    return Request(
        repo=repo,
        good=scenario.good,
        bad=scenario.bad,
        test=scenario.test,
        build=scenario.build,
        timeout=scenario.timeout,
        results=scenario.results,
    )


def command(scenario: Scenario) -> list[str]:
    """The arguments of `ddchange` that search a repository built from `scenario` as `request`
    does, to run it by hand there: the same options make the same run, so it resumes."""
    args = [f"{scenario.good}..{scenario.bad}"]
    if scenario.build is not None:
        args += ["--build", scenario.build]
    if scenario.timeout is not None:
        args += ["--timeout", f"{scenario.timeout:g}"]
    for spec in scenario.results:
        args += ["--results", spec]
    return [*args, "--", *scenario.test]


@dataclass(frozen=True, kw_only=True)
class Figures:
    """What a scenario's GOOD..BAD holds: its changes as the search and its answer count them
    (blocks, the default granularity), the files they are in, the commits and their authors."""

    changes: int
    files: int
    commits: int
    authors: int

    def __str__(self) -> str:
        return (
            f"{self.changes} changes in {self.files} files, {self.commits} commits by "
            f"{self.authors} authors"
        )


def figures(scenario: Scenario, repo: Path) -> Figures:
    """The figures of `scenario`'s GOOD..BAD, read from the repository built from it: counted,
    never typed, so that the demo, its list and the README say what the answer counts."""
    from ddchange.diff import linechanges, read
    from ddchange.hierarchy.grouping import Hierarchy

    opened = git.open_repo(repo)
    good, bad = (git.resolve_commit(opened, rev) for rev in (scenario.good, scenario.bad))
    diff = linechanges.split_lines(read.read_diff(opened, good, bad))
    blocks = Hierarchy(diff, dependencies=False)
    shas = git.commits(opened, good, bad)
    return Figures(
        changes=len({blocks.block(unit.id) for unit in diff.hunks}),
        files=len({unit.path for unit in diff.hunks}),
        commits=len(shas),
        authors=len({info.author for info in git.commit_infos(opened, shas).values()}),
    )


def changes(units: Iterable[tuple[str, str, int | None]]) -> list[tuple[str, str]]:
    """An answer's changes as (path, diff) from its units as (path, diff, block): the units of
    one block (a block number, at block granularity; None elsewhere) are one change."""
    gathered: dict[tuple[str, int], tuple[str, list[str]]] = {}
    for number, (path, diff, block) in enumerate(units):
        key = ("unit", number) if block is None else ("block", block)
        gathered.setdefault(key, (path, []))[1].append(diff)
    return [(path, "".join(diffs)) for path, diffs in gathered.values()]


def answer(result: Result) -> list[tuple[str, str]]:
    """A result's changes as `matches` reads them (see `changes`)."""
    from ddchange.report.words import blocks  # the report's own gathering, loaded when asked

    return [(c[0].path, "".join(h.diff for h in c)) for c in blocks(result, result.culprits)]


def cause_answer(result: SuiteResult, number: int) -> list[tuple[str, str]]:
    """Cause `number`'s changes (0 the first) as `matches` reads them (see `changes`)."""
    found = result.changes[number]
    whole = result.request.granularity == Level.BLOCK
    return changes((h.path, h.diff, found.blocks.get(h.id) if whole else None) for h in found.units)


def causes_match(scenario: Scenario, result: SuiteResult) -> bool:
    """Whether a triage found exactly the scenario's causes: the same tests, each cause with
    its expected answer (inside its tests' first bad commit where the triage went inside it)."""
    found = {frozenset(c.tests): n for n, c in enumerate(result.causes)}

    def right(cause: Cause, number: int) -> bool:
        inside = result.changes[number].first_bad is not None and cause.inside
        return expected_in(cause.inside if inside else cause.expected, cause_answer(result, number))

    return len(found) == len(scenario.causes) and all(
        frozenset(cause.tests) in found and right(cause, found[frozenset(cause.tests)])
        for cause in scenario.causes
    )


def matches(scenario: Scenario, found: Sequence[tuple[str, str]], *, inside: bool) -> bool:
    """Whether an answer, as (path, diff text) per unit, is exactly the expected answer: the
    answer inside the first bad commit where the search went `inside` it (`Scenario.inside`,
    where the scenario has one), else the whole range's.

    Each expected unit must be found once (its path, and its line among the unit's diff lines),
    and the answer may hold nothing else.
    """
    return expected_in(scenario.inside if inside and scenario.inside else scenario.expected, found)


def expected_in(wanted: Sequence[Expected], found: Sequence[tuple[str, str]]) -> bool:
    """`matches`, for any list of expected units."""

    def is_unit(expected: Expected, path: str, diff: str) -> bool:
        return path == expected.path and expected.line in diff.splitlines()

    return len(found) == len(wanted) and all(
        sum(is_unit(expected, path, diff) for path, diff in found) == 1 for expected in wanted
    )


def scenarios() -> list[Scenario]:
    """Every bundled scenario, sorted by name."""
    return [load(name) for name in _names()]


def load(name: str) -> Scenario:
    """The scenario called `name`; `UnknownScenario` lists the known names if there is none."""
    known = _names()
    if name not in known:
        raise UnknownScenario(name, tuple(sorted((*known, *input_names()))))
    return read(scenario_root() / name)


def read(source: Path) -> Scenario:
    """The scenario in directory `source` (named after it), wherever that directory is."""
    with (source / SCENARIO_FILE).open("rb") as fh:
        data = tomllib.load(fh)
    return _parse(source.name, source, data)


def build_repo(scenario: Scenario, dest: Path) -> Path:
    """Replay `scenario` into a new repository at `dest` (absent or empty); returns `dest`.

    Each branch ends at its last commit and `main` is checked out; GOOD, BAD and any other tags
    are lightweight tags. A merge that conflicts where its overlay writes nothing, or that
    has nothing to merge, raises ValueError.
    """
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    init_repo(dest)
    branch = "main"
    for index, commit in enumerate(scenario.commits):
        _switch(dest, branch, commit)
        branch = commit.branch
        if commit.merge is None:
            _apply_overlay(scenario.source / "commits", dest, commit)
        else:
            _merge(scenario.source / "commits", dest, commit, commit.merge, index)
        commit_all(dest, commit.message, commit.author, index)
        if commit.tag is not None:
            git.tag(dest, commit.tag)
    if branch != "main":
        git.switch(dest, "main")
    return dest


def init_repo(dest: Path) -> None:
    """`git init` with branch `main` at `dest`, isolated from templates and user configuration."""
    git.init(dest)


def commit_all(repo: Path, message: str, author: str, index: int) -> str:
    """Stage the whole work tree of `repo`, commit it as `author` on day `index`; the new SHA.

    Author and committer are both `author`, dated `index` days after 2024-01-01 12:00 UTC, so
    the SHA depends on nothing but the tree, the parents, `message`, `author` and `index`.
    """
    git.stage_all(repo)
    return git.commit(repo, message, _signature(author, index))


def _names() -> tuple[str, ...]:
    root = scenario_root()
    return tuple(sorted(p.name for p in root.iterdir() if (p / SCENARIO_FILE).is_file()))


def _parse(name: str, source: Path, data: Mapping[str, Any]) -> Scenario:
    where = source / SCENARIO_FILE
    commits = _parse_commits(where, _required(where, data, "commit"))
    tags = {c.tag for c in commits if c.tag is not None}
    for key in ("good", "bad"):
        if data.get(key) not in tags:
            raise ValueError(f"{where}: {key} = {data.get(key)!r} is not the tag of any commit")
    timeout = data.get("timeout")
    causes = _parse_causes(where, data)
    return Scenario(
        name=name,
        description=str(_required(where, data, "description")),
        good=str(data["good"]),
        bad=str(data["bad"]),
        test=tuple(str(arg) for arg in _required(where, data, "test")),
        build=None if data.get("build") is None else str(data["build"]),
        timeout=None if timeout is None else float(timeout),
        expected=_parse_expected(where, _list(where, data, "expected", required=not causes)),
        source=source,
        commits=commits,
        results=_parse_results(where, data),
        causes=causes,
        inside=_parse_expected(where, _list(where, data, "inside")),
    )


def _parse_expected(where: Path, expected: Sequence[Mapping[str, Any]]) -> tuple[Expected, ...]:
    return tuple(
        Expected(path=str(_required(where, e, "path")), line=str(_required(where, e, "line")))
        for e in expected
    )


def _parse_results(where: Path, data: Mapping[str, Any]) -> tuple[str, ...]:
    """The `results` specs, each `KIND:PATH`."""
    specs = tuple(str(spec) for spec in _list(where, data, "results"))
    for spec in specs:
        kind, _, path = spec.partition(":")
        if not kind or not path:
            raise ValueError(f"{where}: results entry {spec!r} is not KIND:PATH")
    return specs


def _parse_causes(where: Path, data: Mapping[str, Any]) -> tuple[Cause, ...]:
    """The `[[cause]]` tables: each names targets and an answer, and no target is named twice."""
    causes = tuple(
        Cause(
            tests=tuple(str(test) for test in _list(where, cause, "tests", required=True)),
            expected=_parse_expected(where, _list(where, cause, "expected", required=True)),
            inside=_parse_expected(where, _list(where, cause, "inside")),
        )
        for cause in _list(where, data, "cause")
    )
    seen: set[str] = set()
    for cause in causes:
        if not cause.tests or not cause.expected:
            raise ValueError(f"{where}: a [[cause]] needs tests and [[cause.expected]]")
        for test in cause.tests:
            if test in seen:
                raise ValueError(f"{where}: target {test!r} is named twice in [[cause]] tests")
            seen.add(test)
    if causes and "results" not in data:
        raise ValueError(f"{where}: [[cause]] needs results, where each run writes its outcomes")
    return causes


def _parse_commits(where: Path, commits: Sequence[Mapping[str, Any]]) -> tuple[Commit, ...]:
    """The commits in order, each placed on its branch; `branches` and `tags` grow as they go."""
    parsed: list[Commit] = []
    branches: set[str] = set()
    tags: set[str] = set()
    for data in commits:
        current = parsed[-1].branch if parsed else "main"
        commit = _parse_commit(where, data, current, branches, tags)
        parsed.append(commit)
        branches.add(commit.branch)
        if commit.tag is not None:
            tags.add(commit.tag)
    return tuple(parsed)


def _parse_commit(
    where: Path, data: Mapping[str, Any], current: str, branches: set[str], tags: set[str]
) -> Commit:
    """One `[[commit]]`, made after the branches and tags that exist so far."""
    author = str(_required(where, data, "author"))
    _split_identity(author)  # fail when loading, not halfway through a build
    branch, start = _place(where, data, current, branches, tags)
    merge = _optional(data, "merge")
    if merge is not None and (merge not in branches | tags or merge == branch):
        raise ValueError(f"{where}: merge = {merge!r} is no earlier tag or other branch")
    tag = data.get("tag")
    return Commit(
        dir=_optional(data, "dir") if merge is not None else str(_required(where, data, "dir")),
        message=str(_required(where, data, "message")),
        author=author,
        branch=branch,
        start=start,
        merge=merge,
        tag=None if tag is None else str(tag),
        delete=tuple(str(p) for p in data.get("delete", ())),
        executable=tuple(str(p) for p in data.get("executable", ())),
    )


def _place(
    where: Path, data: Mapping[str, Any], current: str, branches: set[str], tags: set[str]
) -> tuple[str, str | None]:
    """The branch a commit goes on, and the ref that branch starts at if the commit creates it.

    The first commit starts `main` in the empty repository; any other new branch needs `from`.
    """
    branch = str(data.get("branch", current))
    start = _optional(data, "from")
    if not branches:
        if branch != "main" or start is not None or "merge" in data:
            raise ValueError(f"{where}: the first commit starts 'main': no branch, from or merge")
        return branch, None
    if branch in branches and start is not None:
        raise ValueError(f"{where}: branch {branch!r} exists, so it takes no 'from'")
    if branch not in branches and start not in branches | tags:
        raise ValueError(f"{where}: new branch {branch!r} needs from = an earlier tag or branch")
    return branch, start


def _optional(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


def _list(where: Path, data: Mapping[str, Any], key: str, *, required: bool = False) -> list[Any]:
    """The list under `key` ([] if absent and not `required`); anything else is an error."""
    value = _required(where, data, key) if required else data.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"{where}: {key!r} must be a list, not {value!r}")
    return value


def _required(where: Path, data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        raise ValueError(f"{where}: missing {key!r}")
    return data[key]


def _switch(repo: Path, current: str, commit: Commit) -> None:
    """Check out the branch `commit` goes on, creating it at `commit.start` if that is set."""
    if commit.start is not None:
        git.switch(repo, commit.branch, create_at=commit.start)
    elif commit.branch != current:
        git.switch(repo, commit.branch)


def _merge(overlays: Path, repo: Path, commit: Commit, ref: str, index: int) -> None:
    """Merge `ref` (the commit's `merge`) into the checked-out branch, then write the overlay.

    Every path that conflicts must be one the overlay writes or deletes: that is how a scenario
    resolves a conflict. The merge is left for `commit_all` to commit as the scenario says.
    """
    conflicts = git.merge(repo, ref, _signature(commit.author, index))
    # `--no-ff` does not make "Already up to date." a merge: there would be one parent.
    if not git.is_merging(repo):
        raise ValueError(f"{ref!r} is already in {commit.branch!r}: nothing to merge")
    unresolved = conflicts - _apply_overlay(overlays, repo, commit)
    if unresolved:
        raise ValueError(
            f"merging {ref!r} into {commit.branch!r} ({commit.message!r}) conflicts in "
            f"{', '.join(sorted(unresolved))}: the commit needs an overlay that resolves them"
        )


def _apply_overlay(overlays: Path, tree: Path, commit: Commit) -> set[str]:
    """Write every file of the commit's overlay over `tree`, then apply its deletes and chmods.

    Returns the paths written or deleted, relative to `tree` and with `/` separators.
    """
    touched = set(commit.delete)
    if commit.dir is not None:
        touched.update(_write_files(overlays / commit.dir, tree))
    for path in commit.delete:
        (tree / path).unlink()
    # Only the owner's execute bit reaches git (100755 vs 100644); a wheel or checkout of the
    # scenario sources may lose file modes, so modes are declared, never copied from the overlay.
    for path in commit.executable:
        target = tree / path
        target.chmod(target.stat().st_mode | 0o111)
    return touched


def _write_files(overlay: Path, tree: Path) -> list[str]:
    """Copy every file under `overlay` to the same path under `tree`; the paths copied."""
    if not overlay.is_dir():
        raise ValueError(f"commit directory {overlay} does not exist")
    files = sorted(p.relative_to(overlay) for p in overlay.rglob("*") if p.is_file())
    for path in files:
        dst = tree / path
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes((overlay / path).read_bytes())
    return [path.as_posix() for path in files]


def _signature(author: str, index: int) -> git.Signature:
    """`author` as author and committer, dated `index` days after 2024-01-01 12:00 UTC."""
    name, email = _split_identity(author)
    return git.Signature(name, email, f"@{_EPOCH + index * _DAY} +0000")


def _split_identity(author: str) -> tuple[str, str]:
    """("Ada Lovelace", "ada@example.org") from "Ada Lovelace <ada@example.org>"."""
    match = _IDENTITY.match(author)
    if match is None:
        raise ValueError(f"author {author!r} is not 'Name <email>'")
    return match["name"], match["email"]
