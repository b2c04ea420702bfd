"""The wording every renderer shares: the headline, how sure the answer is, where a change is.

Every fact in these sentences is read from the `Result`'s claims (recorded runs), never inferred.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ddchange.model import (
    Claim,
    Confirmation,
    Earlier,
    Ending,
    Level,
    Outcome,
    Result,
    Strategy,
)
from ddchange.search import confidence

if TYPE_CHECKING:  # types only: `ddchange log` words records without loading the diff's code
    from ddchange.diff.hunks import Hunk
    from ddchange.git import CommitInfo


# What a terminal acts on instead of showing: the C0 controls but tab and line feed (ESC starts an
# escape sequence, a carriage return writes over what came before), DEL, the C1 controls (CSI),
# also as the undecodable bytes that reach the terminal raw (surrogate escapes), and the
# bidirectional overrides and isolates, which reorder what is shown after them.
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\udc80-\udc9f]")


def printable(text: str) -> str:
    """`text` safe to print on a terminal: what it would act on (`_UNSHOWN`), written as \\xNN
    or \\uNNNN. The test's output, file names, diffs and commit subjects come from anyone."""
    return _UNSHOWN.sub(lambda m: escaped(m[0]), text)


def escaped(char: str) -> str:
    """One character as Python would write it escaped: \\xNN, or \\uNNNN; a surrogate escape
    as the byte it stands for."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        code -= 0xDC00
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def unit(granularity: str) -> str:
    """What one unit of the search is called: at block granularity a change is a block of line
    changes (as `headline` counts them), so a unit is a "line change"; elsewhere it is a change."""
    return "line change" if granularity == Level.BLOCK else "change"


def reused(resumed: int, earlier: Earlier | None) -> str:
    """How many tests the run took over instead of running them (`resumed`), and from where
    (`earlier`): the same command's earlier run (and its search options, where they differ),
    or a replayed log."""
    when = f" on {earlier.when} UTC" if earlier is not None and earlier.when else ""
    if earlier is not None and earlier.changed:
        files = ", ".join(earlier.changed)
        return (
            f"none taken from an earlier run of this command{when}: {files} changed since, so "
            "every test ran again"
        )
    taken = f"{resumed} taken from"
    if earlier is None or earlier.replayed:
        return f"{taken} the replayed log" if earlier is not None else ""
    said = f"{taken} an earlier run of this command{when}"
    if not earlier.options:
        return said
    chosen = "these options choose" if len(earlier.options) > 1 else "this option chooses"
    ran = ", ".join(earlier.options)
    return f"{said} (it ran {ran}; {chosen} which tests run, not what a test answers)"


@dataclass(frozen=True, kw_only=True)
class ShownDiff:
    """The part of a change's diff a report prints: at most so many lines, each cut at so many
    characters, so that a one-line change of 20 MB prints a few KB. The patch file (--patch)
    has the whole change, byte for byte."""

    lines: list[str]
    more: int  # lines left out after the last one shown
    cut: int  # lines shown only up to `width` characters
    width: int

    def note(self) -> str:
        """What was left out, and where the whole is; "" when nothing was."""
        parts = [plural(self.more, "more line")] if self.more else []
        if self.cut:
            parts.append(f"{plural(self.cut, 'line')} cut at {self.width} characters")
        return f"… {'; '.join(parts)} (the whole change is in --patch)" if parts else ""


def shown_diff(diff: str, *, lines: int, width: int) -> ShownDiff:
    """The first `lines` lines of `diff`, each longer than `width` characters cut there with how
    many characters more it has."""
    text = diff.rstrip("\n")
    *head, rest = text.split("\n", lines) if text else [""]
    if len(head) < lines:  # all of them: `rest` is the last line, if any
        head, rest = [*head, rest] if text else [], ""
    more = rest.count("\n") + 1 if rest else 0
    cut = [line for line in head if len(line) > width]
    shown = [
        f"{line[:width]}… ({len(line) - width:,} more characters)" if len(line) > width else line
        for line in head
    ]
    return ShownDiff(lines=shown, more=more, cut=len(cut), width=width)


def location(hunk: Hunk, scope: str) -> str:
    where = f"{hunk.path}:{hunk.new_start}" if hunk.kind == "text" else hunk.path
    kind = "" if hunk.kind == "text" else f" ({hunk.kind})"
    return f"{where}{kind}  in {scope}" if scope else f"{where}{kind}"


def headline(result: Result) -> str:
    """The answer in one sentence; every fact in it is read from a `Claim` (a recorded run)."""
    request, count = result.request, len(result.culprits)
    between = _between(result)
    changes = f"{plural(count, 'change')} of {len(result.diff.hunks)}"
    if request.granularity == Level.BLOCK:
        count = len(blocks(result, result.culprits))
        total = len(result.culprits), len(result.diff.hunks)
        changes = f"{plural(count, 'change')} ({total[0]} of {total[1]} line changes)"
    command = f"`{shlex.join(request.test)}`"
    if result.outcome == Ending.INTERRUPTED:
        return (
            f"ddchange: interrupted. Best answer so far: {changes} {between} ({_seen(result)}); "
            "it may not be minimal yet."
        )
    if result.outcome == Ending.FLAKY:
        return (
            f"ddchange: NO RELIABLE ANSWER: the test is flaky. The smallest set seen to fail is "
            f"{changes} {between} ({_seen(result)} under {command})."
        )
    if request.isolate:
        return (
            f"ddchange: GOOD plus {plural(len(result.passing), 'change')} passes; adding "
            f"{'this' if count == 1 else 'these'} {changes} {between} makes {command} fail. "
            f"{_minimality(result)}"
        )
    verb = "makes" if count == 1 else "make"
    said = f"{changes} {between} {verb} {command} fail. {_minimality(result)}"
    first = first_bad(result)
    return f"ddchange: {first}; inside it, {said}" if first else f"ddchange: {said}"


def _between(result: Result) -> str:
    """Which changes the answer is of, and what it applies on: GOOD..BAD's, or, when the
    search went on inside the history, the searched commit's against its parent."""
    request, found = result.request, result.route
    base, tip = result.revisions.good, result.revisions.bad
    if not found.inside:
        return f"between {request.good} ({base[:12]}) and {request.bad} ({tip[:12]})"
    if found.searched == "commit":
        return f"of commit {tip[:12]}, on its parent {base[:12]}"
    if found.searched == "merge":
        return f"of merge {tip[:12]}, on its first parent {base[:12]}"
    return f"between commits {base[:12]} and {tip[:12]}, on {base[:12]}"


def base_name(result: Result) -> str:
    """What the answer applies on, as the report's sentences name it: GOOD, or the commit the
    search inside the history went on from."""
    relation = base_relation(result)
    if relation is None:
        return "GOOD"
    if relation == "the last good commit":
        return f"commit {result.revisions.good[:12]} ({relation})"
    return f"commit {result.revisions.good[:12]} (its {relation})"


def base_relation(result: Result) -> str | None:
    """How the commit the answer applies on stands to the first bad commit, where the search
    went inside the history ("parent", "first parent", "the last good commit"); None: GOOD."""
    found = result.route
    if not found.inside:
        return None
    if found.searched == "skipped":
        return "the last good commit"
    return "first parent" if found.searched == "merge" else "parent"


def first_bad(result: Result) -> str:
    """'First bad commit F (subject, author, date), found in k tests' for an answer found
    inside the history; "" elsewhere."""
    found = result.route
    if not found.inside or found.first_bad is None:
        return ""
    tip = result.revisions.bad
    named = found.first_bad if not found.merges else tip
    info = found.commits.get(named)
    about = f" ({info.subject}, {info.author}, {info.date[:10]})" if info else ""
    merged = f", on the branch that merge {found.merges[0][:12]} brought" if found.merges else ""
    what = "First bad commit" if found.searched != "skipped" else "First commit seen to fail"
    return f"{what} {named[:12]}{about}{merged}, found in {plural(found.located_in, 'test')}"


def blocks(result: Result, units: list[Hunk]) -> list[list[Hunk]]:
    """`units` (in diff order) as the answer's changes: at block granularity gathered by block,
    elsewhere one each."""
    if result.request.granularity != Level.BLOCK:
        return [[unit] for unit in units]
    gathered: dict[int, list[Hunk]] = {}
    for unit in units:
        gathered.setdefault(result.blocks.get(unit.id, -len(gathered) - 1), []).append(unit)
    return list(gathered.values())


def without_each(result: Result) -> dict[str, Outcome]:
    """ddmin: each culprit's recorded outcome without it (the answer less the atom that holds
    it, a check by a real run): PASS where it is the failure, UNRESOLVED where the rest cannot
    be tested without it."""
    if result.request.isolate or result.answer is None:
        return {}
    answer, single = result.answer.config, result.checks[: len(result.checks) - result.wider]
    return {unit: check.outcome for check in single for unit in answer - check.config}


def _seen(result: Result) -> str:
    """How often the answer was seen to fail, from its records."""
    claim = result.answer
    if claim is None or claim.fails == 0:
        return "nothing smaller than BAD was seen to fail"
    return f"it failed in {claim.fails} of {plural(claim.runs, 'run')}"


def _minimality(result: Result) -> str:
    """What the recorded checks say about taking one change away (or, with --isolate, adding
    one to the passing set)."""
    if result.request.isolate:
        grown = [c.outcome for c in result.checks[0::2]]
        shrunk = [c.outcome for c in result.checks[1::2]]
        return (
            "The difference is 1-minimal, each change checked by a run: the passing set plus "
            f"it {_tally(grown, Outcome.PASS)}, and the failing set without it "
            f"{_tally(shrunk, Outcome.FAIL)}."
        )
    split = len(result.checks) - result.wider
    outcomes = [c.outcome for c in result.checks[:split]]
    wider = [c.outcome for c in result.checks[split:]]
    them = _removed(result)
    if len(outcomes) == 1 and outcomes[0] is Outcome.PASS:
        return "Without it the test passes (checked by a run)."
    if outcomes and all(o is Outcome.PASS for o in outcomes):
        return f"It is 1-minimal: removing any one of {them} makes it pass (each checked by a run)."
    said = _not_shown(outcomes, them)
    if not wider:
        return said
    return (
        f"{said} Removed together with the changes that need them, or as whole blocks, hunks, "
        f"functions or files, where one alone could not be tested, it "
        f"{_tally(wider, Outcome.FAIL)}."
    )


def minimal_by_runs(outcomes: list[Outcome]) -> bool:
    """Whether runs show 1-minimality: each removal was run, and passed."""
    return bool(outcomes) and all(o is Outcome.PASS for o in outcomes)


# Why a check removed parts of a change, not the change whole (Search.by_origin).
PARTS = (
    "a change is checked in parts where its lines came from different commits or show as "
    "separate hunks of its own patch, and line by line where removing it whole passed"
)


def _removed(result: Result) -> str:
    """What the checks of a ddmin answer removed one at a time: "them" (its changes), or,
    where the check cut a change (its lines came from different commits, show as different
    hunks of the answer's own patch, or were each needed: Search.by_origin), its parts."""
    answer = frozenset(unit.id for unit in result.culprits)
    changes = {frozenset(u.id for u in change) for change in blocks(result, result.culprits)}
    parts = [answer - c.config for c in result.checks[: len(result.checks) - result.wider]]
    if all(part in changes for part in parts):
        return "them"
    return f"its {len(parts)} parts ({PARTS})"


def _not_shown(outcomes: list[Outcome], them: str) -> str:
    """What the checks of a ddmin answer show where not every removal passed: 1-minimality is
    shown only by removals seen to pass, so the word is not used."""
    passed = sum(o is Outcome.PASS for o in outcomes)
    untested = sum(o is Outcome.UNRESOLVED for o in outcomes)
    if not passed:
        return (
            "No removal could be tested without breaking the build or the test "
            f"({_tally(outcomes, Outcome.FAIL).removeprefix('did not fail (')}: it is not "
            "shown to be 1-minimal."
        )
    return (
        f"Removing {passed} of {them} one at a time makes it pass (each checked by a run); "
        f"without {'the other one' if untested == 1 else f'each of the other {untested}'} the "
        "test could not be run (a broken build or another failure), so it is not shown to be "
        "1-minimal."
    )


def _tally(outcomes: list[Outcome], never: Outcome) -> str:
    """'did not pass (2 failed, 1 could not be tested)', counted from recorded outcomes."""
    counts = {o: sum(x is o for x in outcomes) for o in Outcome if o is not never}
    parts = [
        f"{n} {'could not be tested' if o is Outcome.UNRESOLVED else o.value + 'ed'}"
        for o, n in counts.items()
        if n
    ]
    return f"did not {never.value} ({', '.join(parts) or 'no run'})"


def commit_line(info: CommitInfo) -> str:
    return f"{info.sha[:12]} {info.author}, {info.date[:10]}: {info.subject}"


def route(result: Result) -> str:
    """How the run came to the changes it searched (--strategy auto): each commit the
    bisection tested and its outcome, the first bad commit's runs, and what the answer does
    on GOOD; or why it searched the whole range."""
    found = result.route
    if found.strategy != Strategy.AUTO:
        return ""
    if found.fallback and not found.bisected:
        return f"Route: the whole of GOOD..BAD was searched: {found.fallback}."
    tested = ", ".join(f"{sha[:12]} {_verdict(claim)}" for sha, claim in found.bisected)
    # where GOOD is no ancestor of BAD, the commit they forked from is among those tested
    span = (
        "from the commit GOOD and BAD forked from to BAD" if found.fork else "between GOOD and BAD"
    )
    lines = [
        f"Bisection: BAD failed, and of the commits {span} "
        f"{plural(found.bisect_tests, 'commit')} {'was' if found.bisect_tests == 1 else 'were'} "
        "tested, each its own tree" + (f": {tested}." if tested else ".")
    ]
    if found.fork and not found.fallback:
        lines.append(
            f"GOOD is not an ancestor of BAD: as `git bisect` does, the commit they forked "
            f"from, {found.fork[:12]}, was tested first, and the bisection started from it "
            "where it passed."
        )
    if found.fallback:
        lines.append(f"The whole of GOOD..BAD was searched: {found.fallback}.")
        return " ".join(lines)
    if found.tip is not None and all(sha != result.revisions.bad for sha, _ in found.bisected):
        lines.append(
            f"Commit {result.revisions.bad[:12]} failed in {found.tip.fails} of "
            f"{plural(found.tip.runs, 'run')}."
        )
    if found.searched == "skipped":
        lines.append(
            f"The commits between {result.revisions.good[:12]} and "
            f"{result.revisions.bad[:12]} could not be tested: the search went over their "
            "changes together."
        )
    if found.searched == "merge":
        lines.append(
            "Its merged branch could not tell (its own tip did not fail, or the commit it "
            "forked from did not pass): the search went over the merge's changes against its "
            "first parent."
        )
    lines.append(on_good(result))
    return " ".join(line for line in lines if line)


def _verdict(claim: Claim) -> str:
    """A commit's outcome as its runs say, with how many there were past one."""
    word = "could not be tested" if claim.outcome is Outcome.UNRESOLVED else claim.outcome.value
    return word if claim.runs == 1 else f"{word} ({claim.fails} of {claim.runs} runs failed)"


def on_good(result: Result) -> str:
    """What the answer found inside the history does on GOOD: the one run that asked."""
    found = result.route
    again = "for an answer that applies on GOOD, search the whole range with `--strategy diff`"
    claim, note = found.on_good, found.on_good_note
    if claim is None:
        return f"On GOOD, these changes {note}; {again}." if note else ""
    how = f" ({note})" if note and claim.outcome is not Outcome.UNRESOLVED else ""
    if claim.outcome is Outcome.FAIL:
        return f"On GOOD, these changes{how} make the test fail too (1 run)."
    if claim.outcome is Outcome.PASS:
        return (
            f"On GOOD, these changes{how} pass (1 run): the answer needs what the commits "
            f"before it brought; {again}."
        )
    return f"On GOOD, these changes could not be tested ({note}; 1 run); {again}."


def confirmation(
    confirmation: Confirmation | None, *, isolate: bool, base: str = "GOOD"
) -> list[str]:
    """How the answer was checked at the end, and how sure that makes it, in words: `base`
    is what the answer applies on (`base_name`)."""
    if confirmation is None:
        return ["Not confirmed (--no-confirm): the answer was seen to fail once."]
    what = "the failing set" if isolate else "these changes"
    if confirmation.answer is not Outcome.FAIL:
        return [
            f"NOT confirmed: {base} plus {what} gave {confirmation.answer.value.upper()} when run "
            f"again ({confirmation.runs} runs in all)."
        ]
    one_in = round(1 / confirmation.flake_rate)
    lines = [
        f"Confirmed: {base} plus {what} failed again in {confirmation.reruns} of "
        f"{confirmation.reruns} reruns ({confirmation.runs} runs in all). Confidence "
        f"{percent(1 - confirmation.risk)}: if the test fails at random in up to 1 run of "
        f"{one_in}, a wrong answer would have come through this {percent(confirmation.risk)} of "
        "the time (--confidence asks for more reruns)."
    ]
    if confirmation.contradicted:
        lines.append(
            f"Changes holding all of {what} passed in a run of the search, which a test that "
            "fails whenever they are in cannot do: their FAILs came at random, or the test is "
            "not monotone, so they ran again as for a test seen to fail at random."
        )
    lines += _good_at_end(confirmation, base)
    if confirmation.bad is not None and confirmation.bad.outcome is Outcome.FAIL:
        tip = "BAD" if base == "GOOD" else "the commit searched"
        lines.append(
            f"{tip[0].upper()}{tip[1:]} failed again in all {confirmation.bad.runs} of its "
            "runs: every answer rests on its FAIL, run again as the answer's since the test "
            "fails at random."
        )
    if isolate:
        return lines
    rest = {
        Outcome.PASS: "BAD without them passed (a run of the search): they are the whole cause.",
        Outcome.FAIL: "BAD without them failed (a run of the search): the failure has other "
        "causes as well (search again from GOOD plus this answer).",
        Outcome.UNRESOLVED: "BAD without them could not be tested (unresolved).",
    }
    if confirmation.rest is not None:
        lines.append(rest[confirmation.rest])
    return lines


def _good_at_end(confirmation: Confirmation, base: str) -> list[str]:
    """What GOOD's runs after the search showed (`base` is what the answer applies on)."""
    good, capital = confirmation.good, f"{base[0].upper()}{base[1:]}"
    if good is None:
        return []
    if confirmation.good_failing:
        return [
            f"{capital} FAILED in its last {confirmation.good_failing} runs at the end "
            f"({plural(good.runs, 'run')} in all): what the search's runs left in the scratch "
            "tree makes it fail, or it fails now, so the answer's runs tell nothing (--clean "
            "removes build output between tests)."
        ]
    random = f", {good.fails} of them a FAIL at random" if good.fails else ""
    return [
        f"{capital} passed again at the end ({plural(good.runs, 'run')} in all{random}): "
        "nothing the search's runs left in the scratch tree makes it fail."
    ]


def percent(share: float) -> str:
    """A share as a percentage with the digits it needs: 99.6%, 0.39%, 99.98%."""
    for digits in range(1, 6):
        text = f"{share * 100:.{digits}f}"
        if float(text) not in (0.0, 100.0):
            return f"{text.rstrip('0').rstrip('.')}%"
    return f"{share * 100:g}%"


def flaky(result: Result) -> list[str]:
    """The evidence of a flaky test: why there is no answer (FLAKY), or what the answer
    found in spite of it rests on."""
    if result.outcome == Ending.FLAKY:
        lines = [
            "WARNING: the test is flaky: the same changes gave different outcomes, and no answer "
            f"was confirmed (the search goes again at most {confidence.MAX_SEARCHES - 1} "
            "times), so the answer below is not reliable. Evidence:"
        ]
    else:
        lines = [
            "NOTE: the test fails at random: the same changes failed and then passed (a PASS is "
            "taken as a fact, a flaky test does not pass at random). The answer's FAIL was run "
            "again as the confidence asks at the rate seen (below); a removal that passed needs "
            "no rerun. Evidence:"
        ]
    # at block granularity the units are line changes, and the headline counts blocks
    unit = "line change" if result.request.granularity == Level.BLOCK else "change"
    for evidence in result.disagreements:
        outcomes = ", ".join(o.value.upper() for o in evidence.outcomes)
        lines.append(f"  {plural(evidence.size, unit)} ({evidence.phase}): {outcomes}")
    checked = result.confirmation
    if checked is not None and checked.good_failing:
        lines += _good_at_end(checked, base_name(result))
    if result.outcome == Ending.FLAKY:
        lines.append("Make the test deterministic, or rerun with --retries N to see how often.")
    return lines


SHOWN_LIMITS = 5  # paths of --keep and --ignore named in the text; --json has them all


def limits(result: Result) -> list[str]:
    """What --keep and --ignore took out of the search, one line each."""
    lines = []
    for paths, what in (
        (result.kept, "applied as in BAD in every test and in the patch (--keep)"),
        (result.ignored, "left as in GOOD (--ignore)"),
    ):
        if paths:
            shown = ", ".join(paths[:SHOWN_LIMITS])
            more = f" and {len(paths) - SHOWN_LIMITS} more" if len(paths) > SHOWN_LIMITS else ""
            lines.append(f"Not searched, {what}: {plural(len(paths), 'path')}: {shown}{more}.")
    return lines
