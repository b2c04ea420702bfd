"""The one place where errors become messages and exit codes.

Each expected error (errors.py) gets one line that says what went wrong and what to do next;
its exit code is the error's own (`errors.Exit`, whose table `ddchange run --help` shows and the
README repeats; a test keeps them equal).
"""

from __future__ import annotations

import shlex
import signal

from ddchange import errors
from ddchange.errors import Exit
from ddchange.report.words import plural

# The table of exit codes, as `ddchange run --help`, the man page and the README show it.
EXIT_CODES = tuple((int(code), code.meaning) for code in Exit)
# The test command's exit codes, as `git bisect run` reads them (trial/runner.classify).
TEST_EXIT_CODES = (
    ("0", "pass: the failure is not there"),
    ("1-127", "fail (but 125), or a crash signal: the failure is there, if it is BAD's own"),
    ("125", "cannot be tested here (as git bisect skip): UNRESOLVED; so are timeouts"),
    ("128-255", "stop everything: ddchange ends (exit 1), as git bisect run aborts"),
)
EXIT_CODES_HELP = (
    "\b\nExit codes:\n"
    + "\n".join(f"  {c:>3}  {text}" for c, text in EXIT_CODES)
    + "\n\n\b\nThe test command's exit codes, as git bisect run reads them:\n"
    + "\n".join(f"  {c:>7}  {text}" for c, text in TEST_EXIT_CODES)
)


def explain(error: errors.DDChangeError) -> str:
    """The message for an expected error, ending with what to do next."""
    match error:
        case errors.NotARepository(path, missing=True):
            return f"no such directory: {path}; cd into a git repository or pass -C PATH."
        case errors.NotARepository(path):
            return f"{path} is not inside a git repository; cd into one or pass -C PATH."
        case errors.UnwritableOutput(option, path, problem):
            return f"cannot write {option} {path}: {problem}; create it or choose another path."
        case errors.SameOutput((first, second), path):
            return (
                f"{first} and {second} both name {path}: one would overwrite the other; give "
                "each its own file."
            )
        case errors.OutputFailed(option=option, path=path, problem=problem, resumable=True):
            return (
                f"could not write {option} {path} ({problem}); the answer is above. Run the same "
                f"command again with another {option} file: every test is taken from the "
                "journal, none runs again."
            )
        case errors.OutputFailed(option=option, path=path, problem=problem):
            return f"could not write {option} {path} ({problem}); the answer is above."
        case errors.BadPathspec(option, spec, complaint):
            return (
                f"{option} {spec!r} is not a pathspec git accepts ({complaint}); see "
                "`git help glossary` (pathspec), or use `.` for every path."
            )
        case errors.PathspecMatchesNothing(option, spec):
            return (
                f"{option} {spec!r} matches no path that changed between GOOD and BAD; check it "
                f"with `git diff --name-only GOOD BAD -- {shlex.quote(spec)}`."
            )
        case errors.NothingLeft(kept, ignored):
            return (
                f"--keep and --ignore leave no change to search ({kept} paths kept, {ignored} "
                "ignored); narrow them."
            )
        case errors.KeptAndIgnored(paths):
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            return f"both --keep and --ignore match {shown}; narrow one of them."
        case errors.ProgramNotFound(name) if " " in name:
            return (
                f"no program named {name!r} on PATH; for a shell line, pass "
                f"`-- sh -c {shlex.quote(name)}`, or split the words: `-- {name}`."
            )
        case errors.ProgramNotFound(name):
            return (
                f"no program named {name!r} on PATH; check the name, or give its path "
                f"(`./{name}` for a file of the repository)."
            )
        case errors.UnknownRevision(rev=rev, kind=str(kind)):
            return f"{rev!r} names a {kind}, not a commit; GOOD and BAD must be commits."
        case errors.UnknownRevision(rev=rev, shallow=True):
            return (
                f"unknown revision {rev!r}; this clone is shallow and may not reach it: fetch "
                "more history with `git fetch --unshallow` (or `--deepen=N`)."
            )
        case errors.UnknownRevision(rev=rev, complaint=complaint) if complaint:
            return f"unknown revision {rev!r} ({complaint}); check it with `git rev-parse {rev}`."
        case errors.UnknownRevision(rev=rev):
            return f"unknown revision {rev!r}; check it with `git rev-parse {rev}`."
        case errors.SameRevisions(good, bad, sha):
            return (
                f"{good} and {bad} are the same commit ({sha[:12]}); nothing changed between "
                "them. Pass a GOOD that is older than BAD."
            )
        case errors.EmptyDiff(good, bad, unsearched) if unsearched:
            return (
                f"between {good} and {bad} only submodule pointers changed "
                f"({', '.join(unsearched)}), and ddchange does not search inside submodules; "
                f"bisect inside the submodule (`git diff {good} {bad} -- {unsearched[0]}` shows "
                "both commits)."
            )
        case errors.EmptyDiff(good, bad):
            return (
                f"{good} and {bad} have identical trees: there are no changes to search. "
                "Check the range with `git diff --stat GOOD BAD`."
            )
        case errors.UnsafePath(commit, path, problem):
            return (
                f"commit {commit[:12]} holds the path {path!r}, with {problem}: git refuses to "
                "check it out, since it could write outside the work tree or into .git, and so "
                "does ddchange. Choose revisions without it (`git fsck` lists such trees)."
            )
        case errors.UnsafeWrite(path, problem):
            return (
                f"refused to write {path!r} in the scratch tree, with {problem}; this is a "
                "ddchange bug (such paths are refused when the diff is read): please report it."
            )
        case errors.UnreadableTrees(good, bad, stderr):
            return (
                f"git cannot read the trees of {good[:12]} and {bad[:12]} "
                f"({_last_line(stderr)}); check the history with `git fsck`, or choose other "
                "revisions."
            )
        case errors.UnknownScenario(name, known):
            return f"no sample scenario {name!r}; choose one of: {', '.join(known)}."
        case errors.BadResults(spec, complaint):
            return (
                f"--results {spec!r}: {complaint}; give junit:PATH (a glob relative to where "
                "the test runs, repeatable) or tap (TAP on the test's output)."
            )
        case errors.NeedsResults(option):
            return (
                f"{option} needs --results: it is about the tests of a whole suite (give "
                "--results junit:PATH or --results tap)."
            )
        case errors.CausesApart(bases):
            return (
                f"no --patch written: the causes apply on {bases} different commits, each "
                "inside its tests' first bad commit; run the same command with --patch-dir DIR "
                "for one patch per cause (every test is taken from the journal), or with "
                "--strategy diff for causes that all apply on GOOD."
            )
        case errors.NoTestResults(which, reason, tail) if reason.startswith("timeout"):
            side = "GOOD" if which == "good" else "BAD"
            return (
                f"{side}'s run gave no test results ({reason}): the suite did not finish; give "
                "it more time with --timeout SECONDS."
            )
        case errors.NoTestResults(which, reason, tail):
            side = "GOOD" if which == "good" else "BAD"
            said = f"\n{tail}" if tail else ""
            return (
                f"{side}'s run gave no test results ({reason}); check that the test command "
                f"writes them where --results says, from the directory it runs in.{said}"
            )
        case errors.NoTargets(already, newly, narrowed):
            among = f" among those --test names ({', '.join(narrowed)})" if narrowed else ""
            return (
                f"no test passes at GOOD and fails at BAD{among}: nothing to search "
                f"({plural(already, 'test')} already failing at GOOD, "
                f"{plural(newly, 'test')} newly passing)."
            )
        case errors.PreflightFailed():
            return _explain_preflight(error)
        case errors.NoGrammar(files):
            return (
                f"--granularity node: no grammar knows {', '.join(files)} (by its name); use "
                "line, token or char, or install ddchange[syntax] for HTML, XML, JSON, CSS, "
                "TOML and YAML."
            )
        case errors.UnreadableInput(path, problem):
            if problem.startswith("exists"):
                return f"{path} {problem}."
            return f"{path}: {problem}; give the input files to reduce, each under this directory."
        case errors.InputNotFailing(
            verdict=verdict, reason=reason, tail=tail, interesting_exit=interesting
        ):
            wanted = (
                f"exit {interesting} (interesting)"
                if interesting is not None
                else "a failure (exit 1-127, not 125)"
            )
            last = tail.rstrip().splitlines()[-1:] or [""]
            shown = f"; its last line: {last[0][:200]}" if last[0] else ""
            return (
                f"pre-flight: the original input should give {wanted}, but the test gave "
                f"{verdict.upper()} ({reason}){shown}; there is nothing to reduce."
            )
        case errors.MaterializationMismatch(paths):
            return (
                "applying every change to GOOD did not reproduce BAD for "
                f"{', '.join(paths[:5])}; this is a ddchange limitation: please report it."
            )
        case errors.RunInProgress(pids):
            return (
                f"ddchange is still running in this repository (pid {', '.join(map(str, pids))}); "
                "stop it first, then run `ddchange reset` again."
            )
        case errors.BadLogFile(path, line, problem):
            where = f"{path}:{line}" if line else str(path)
            return f"{where}: not a ddchange log ({problem}); make one with `ddchange log`."
        case errors.UnknownChanges(ids):
            shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            return (
                f"the tests taken over name changes that this run's diff does not have ({shown}): "
                "a log edited, or of another range; fix its 'test' lines and replay it again, or "
                "`ddchange reset` and run the command afresh."
            )
        case errors.JournalUnavailable(path, reason):
            return f"the journal {path} {_journal_advice(reason)}"
        case errors.GitFailed(command, code, stderr):
            return (
                f"`{shlex.join(command)}` failed (exit {code}): {_last_line(stderr)}; run it by "
                "hand to see why (a failing filter or hook in .gitattributes or your git config?)."
            )
        case errors.GitTimedOut(command, seconds):
            return (
                f"`{shlex.join(command)}` did not end within {seconds:g}s and was stopped; run it "
                "by hand to see why (a FIFO or a filter that never ends?), or allow it longer "
                "with DDCHANGE_GIT_TIMEOUT=SECONDS."
            )
        case errors.UnsafeRepository(said):
            advice = [line.strip() for line in said.splitlines() if "safe.directory" in line]
            allow = f" If you trust it: `{advice[-1]}`." if advice else ""
            return (
                "git refuses to work in this repository: it is owned by another user (git's "
                f"safe.directory).{allow}"
            )
        case errors.TestAborted(code, command):
            return (
                f"`{command}` exited with {code} (above 127{_as_signal(code)}), which means "
                "'abort' as in `git bisect run`; wrap it as `sh -c 'CMD || exit 1'` to count it "
                "as a failure."
            )
        case errors.DaskMissing():
            return (
                "--scheduler needs Dask's distributed package; install it with "
                "`pip install 'ddchange[dask]'`, or run on this machine with -j N."
            )
        case errors.SchedulerUnreachable(address, reason):
            return (
                f"no Dask cluster to use at {address} ({reason}); start `dask scheduler` and "
                "`dask worker ADDRESS` there (see the README), or run on this machine with -j N."
            )
        case errors.ClusterLost(address, problem):
            return (
                f"stopped: {problem} (the Dask cluster at {address}); nothing was recorded for "
                "that test. Check the workers (their logs, `dask worker ...` on each machine), "
                "then run the same command again: it resumes."
            )
        case errors.PathTooLong(tree):
            return (
                f"a path of this range is too long to write in the scratch tree {tree} (this "
                "system's limit on a path or a name); with a shorter temporary directory "
                "(TMPDIR=/tmp) the same command resumes, else choose revisions without it."
            )
        case errors.ScratchReplaced(path):
            return (
                f"stopped: a test replaced {path}, in ddchange's scratch tree, with a link or "
                "another directory; ddchange wrote nothing more there, and nothing outside it. "
                "A test must leave the tree it runs in, and its .git, where they are."
            )
        case errors.EnvironmentFault(problem, path):
            return (
                f"stopped: {problem}, in {path}; nothing was recorded for that run. Fix it "
                "(free space, raise the limit), then run the same command again: it resumes."
            )
    return f"{type(error).__name__}: {error}"


def _last_line(stderr: str) -> str:
    """git's complaint: the last line of its error output that says anything."""
    return next((line for line in reversed(stderr.splitlines()) if line.strip()), "")


def _journal_advice(reason: str) -> str:
    """What is wrong with the journal of completed tests, and what to do about it."""
    if "full" in reason or "No space" in reason:
        return (
            f"cannot grow ({reason}); free disk space, then run the same command again: it resumes."
        )
    if "readonly" in reason or "ermission" in reason or "unable to open" in reason:
        return (
            f"cannot be written ({reason}); make it and its directory writable, or remove it "
            "with `ddchange reset` (completed tests are then run again)."
        )
    return (
        f"cannot be read ({reason}); `ddchange reset` removes it (completed tests are then run "
        "again)."
    )


def _as_signal(code: int) -> str:
    """How a shell reports a death by signal: 139 is 128 + SIGSEGV."""
    try:
        name = signal.Signals(code - 128).name
    except ValueError:
        return ""
    return f"; a shell's way of saying killed by {name}"


def _explain_preflight(error: errors.PreflightFailed) -> str:
    expected = "pass" if error.which == "good" else "fail"
    runs = f" in {error.runs} of {error.runs} runs" if error.runs > 1 else ""
    lines = [
        f"pre-flight: {error.which.upper()} should {expected}, but the test gave "
        f"{error.verdict.upper()}{runs} ({error.reason}); there is nothing to search."
    ]
    lines += ["  | " + line for line in error.tail.rstrip().splitlines()[-15:]]
    if error.reason in ("exit 126", "exit 127"):
        lines.append(
            "the command was not found or not executable in the scratch tree of GOOD: "
            "files you have not committed are not there, so give an absolute path for them."
        )
    if error.reversed:
        lines.append(
            "BAD is an ancestor of GOOD: is the range the wrong way round? GOOD..BAD names "
            "the older revision, where the test passes, first."
        )
    for path in error.keep:
        lines.append(
            f"BAD adds or changes {path}, which the test command names, and GOOD lacks it: to "
            f"apply it in every test, run again with --keep {shlex.quote(path)}."
        )
    if error.unsearched:
        lines.append(
            f"not searched: the submodule changes at {', '.join(error.unsearched)} stay as in "
            "GOOD in every test; if they cause the failure, ddchange cannot find it."
        )
    lines += ["reproduce it by hand:", f"  {_rerun(error)}"]
    return "\n".join(lines)


def _rerun(error: errors.PreflightFailed) -> str:
    """A shell command that repeats the pre-flight check by hand, in a throwaway clone of its
    own (a new temporary directory each time; your repository is not touched): the files that
    --keep and --ignore pin are put in place, and the build and the test run as ddchange runs
    them, each in its own shell, in the same subdirectory."""
    steps = [
        'place="$(mktemp -d)"',
        "git clone --quiet --shared --no-checkout --template= -- "
        f'{shlex.quote(str(error.repo))} "$place"',
        'cd "$place"',
        f"git checkout --quiet --detach {error.sha[:12]}",
    ]
    commit, pinned = error.pinned
    if pinned:  # paths taken literally, as --keep and --ignore resolved them
        steps.append(
            f"git --literal-pathspecs checkout --quiet {commit[:12]} -- {shlex.join(pinned)}"
        )
    if error.absent:
        steps.append(f"rm -f -- {shlex.join(error.absent)}")
    if error.subdirectory:
        steps.append(f"cd {shlex.quote(error.subdirectory)}")
    if error.build:
        steps.append(f"sh -c {shlex.quote(error.build)}")
    steps.append(shlex.join(error.test))
    return " && ".join(steps)
