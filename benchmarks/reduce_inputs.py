"""The inputs of `benchmarks/reduce_peers.py`, and what a tool and an input need of this machine.

Each input is made here at run time, deterministically, with its interestingness test: a shell
command that exits 0 while the input is still interesting. The synthetic inputs are in this
module; the real ones, crashes of real programs at the version that had the bug, are in
`reduce_real.py`.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

TOKEN = re.compile(rb"[\w\x80-\xff]+|[^\w\s\x80-\xff]")


class Unavailable(Exception):
    """A tool that cannot run here, or not on this input; the message says why."""


def tokens(data: bytes) -> int:
    return len(TOKEN.findall(data))


def _out(argv: list[str]) -> str:
    """What `argv` prints (stdout, then stderr), stripped; "" when it cannot run."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (done.stdout + done.stderr).strip()


# -- the setup ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    ddchange: Path
    peers: Path  # the venv of the PyPI peers
    python: Path  # the interpreter the checks of the Python-based inputs run
    time_limit: float
    jobs: int
    work: Path

    def peer(self, name: str) -> Path:
        return self.peers / "bin" / name

    def venv(self, *requirements: str) -> Path:
        """The Python of a venv that holds exactly `requirements` (pinned: `name==version`),
        made once per run under the work directory, with this machine's Python 3.11."""
        key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:12]
        home = self.work / "venvs" / key
        python = home / "bin" / "python"
        if python.exists():
            return python
        made = subprocess.run([sys.executable, "-m", "venv", str(home)], capture_output=True)
        if made.returncode == 0:
            made = subprocess.run(
                [str(python), "-m", "pip", "install", "-q", *requirements],
                capture_output=True,
                text=True,
            )
        if made.returncode != 0:
            shutil.rmtree(home, ignore_errors=True)
            raise Unavailable(f"cannot install {' '.join(requirements)} in a venv")
        return python

    def dist_version(self, dist: str) -> str:
        """The version of a distribution installed in the peers' venv."""
        python = self.peer("python")
        if not python.exists():
            raise Unavailable(f"no venv at {self.peers} (see this script's docstring)")
        code = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
        version = _out([str(python), "-c", code, dist]).splitlines()
        if not version or " " in version[-1]:
            raise Unavailable(f"`{dist}` is not installed in {self.peers}")
        return version[-1]


# -- the inputs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Input:
    name: str
    filename: str
    data: bytes
    # The interestingness test, a shell command run in a directory that holds `filename`: exit
    # 0 means interesting. @HERE@ is the directory of the input's helpers, @PY@ the Python.
    check: str
    about: str  # what the check asks, for the report
    helpers: dict[str, str] = field(default_factory=dict)  # files beside check.sh
    is_c: bool = False  # C-Vise and C-Reduce run their C passes
    antlr: tuple[str, str] | None = None  # an ANTLR grammar and its start rule, for picireny
    # the name of the fuzzingbook's own grammar (`fuzzingbook.Grammars`) of the input's format,
    # in its EBNF form, for its GrammarReducer
    book_grammar: str | None = None


def mozilla_html(setup: Setup) -> Input:
    """The Mozilla case of Zeller & Hildebrandt (2002): a Bugzilla query page that crashed the
    printing of Mozilla because of its one `<SELECT ... MULTIPLE>`."""
    rng = random.Random(24735)
    words = ["bug", "query", "product", "component", "version", "status", "resolution"]
    words += ["severity", "keyword"]
    lines = [
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN">',
        "<HTML>",
        "<HEAD>",
        "<TITLE>Bugzilla Query Page</TITLE>",
        '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=iso-8859-1">',
        "</HEAD>",
        '<BODY BGCOLOR="#FFFFFF" TEXT="#000000" LINK="#0000EE" VLINK="#551A8B">',
        '<FORM NAME="queryForm" METHOD="GET" ACTION="buglist.cgi">',
    ]

    def select(name: str, options: list[str], size: int, multiple: bool = False) -> None:
        flag = " MULTIPLE" if multiple else ""
        lines.append('<TR><TD ALIGN="RIGHT"><B>' + name.title() + ":</B></TD><TD>")
        lines.append(f'<SELECT NAME="{name}"{flag} SIZE={size}>')
        lines.extend(f'<OPTION VALUE="{o}">{o}' for o in options)
        lines.append("</SELECT></TD></TR>")

    sections = [
        ("product", [f"Product{i:02d}" for i in range(60)]),
        ("component", [f"Component-{w}-{i}" for i in range(12) for w in words[:7]]),
        ("version", [f"{a}.{b}" for a in range(1, 9) for b in range(9)]),
        ("target_milestone", [f"M{i}" for i in range(1, 40)]),
        ("bug_status", ["UNCONFIRMED", "NEW", "ASSIGNED", "REOPENED", "RESOLVED"]),
        ("resolution", ["FIXED", "INVALID", "WONTFIX", "LATER", "REMIND", "DUPLICATE"]),
        ("bug_severity", ["blocker", "critical", "major", "normal", "minor", "trivial"]),
        ("priority", ["P1", "P2", "P3", "P4", "P5", "--"]),
        ("rep_platform", ["All", "DEC", "HP", "Macintosh", "PC", "SGI", "Sun", "Other"]),
        ("op_sys", [f"System{i}" for i in range(70)]),
        ("keywords", [f"{w}{i}" for i in range(9) for w in words]),
        ("assigned_to", [f"dev{i}@mozilla.org" for i in range(80)]),
    ]
    lines.append('<TABLE BORDER=0 CELLPADDING=2 CELLSPACING=0 WIDTH="100%">')
    for name, options in sections:
        select(name, options, size=7, multiple=name == "priority")
        for _ in range(rng.randint(20, 28)):
            field_name = f"{rng.choice(words)}_{rng.randint(1, 99)}"
            lines.append(
                f'<TR><TD><INPUT TYPE="{rng.choice(["checkbox", "radio", "text"])}" '
                f'NAME="{field_name}" VALUE="{rng.randint(0, 999)}"></TD>'
                f"<TD>{rng.choice(words).title()} {rng.choice(words)}</TD></TR>"
            )
    lines.append("</TABLE>")
    for i in range(40):
        lines.append(f'<P><A HREF="query.cgi?q={i}">Saved query {i}</A> &nbsp; {words[i % 9]}</P>')
    lines += ['<INPUT TYPE="submit" VALUE="Submit query">', "</FORM>", "</BODY>", "</HTML>"]
    return Input(
        name="html",
        filename="page.html",
        data=("\n".join(lines) + "\n").encode(),
        check="grep -q '<SELECT[^>]*MULTIPLE' page.html",
        about="the line of `<SELECT` with `MULTIPLE` is still there (grep), the Mozilla case",
    )


def python_blocks(setup: Setup) -> Input:
    """A module CPython refuses to compile: 22 nested `for` loops in one function (its limit is
    20 blocks), amid helper functions and small classes."""
    rng = random.Random(20)
    parts = ['"""Geometry helpers, generated for benchmarks/reduce_peers.py."""\n', "import math\n"]
    for i in range(60):
        op = rng.choice(["+", "-", "*"])
        parts.append(
            f"\n\ndef helper_{i}(a, b={i}):\n    return (a {op} b) % {rng.randint(7, 97)}\n"
        )
    for i in range(140):
        if i == 70:
            loops = "".join(f"{'    ' * (d + 1)}for i{d} in range(n):\n" for d in range(22))
            parts.append(
                f"\n\ndef deep_sum(n):\n    total = 0\n{loops}{'    ' * 23}total += i21\n"
                "    return total\n"
            )
        parts.append(
            f"\n\nclass Shape{i}:\n"
            f'    """Shape number {i}."""\n\n'
            f"    def __init__(self, size={i}):\n"
            "        self.size = size\n\n"
            "    def area(self):\n"
            f"        return math.pi * self.size * {rng.randint(1, 9)}\n"
        )
    return Input(
        name="python",
        filename="m.py",
        data="".join(parts).encode(),
        check=(
            "@PY@ -c \"compile(open('m.py').read(),'m.py','exec')\" 2>&1 "
            "| grep -q 'too many statically nested blocks'"
        ),
        about='CPython\'s `compile` still fails with "too many statically nested blocks"',
    )


JSON_CHECKER = """\
import json
import sys


def walk(node, depth):
    if isinstance(node, dict):
        if depth >= 3 and node.get("mode") == "danger":
            raise RuntimeError(f"danger mode at depth {depth}")
        for value in node.values():
            walk(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            walk(value, depth + 1)


with open(sys.argv[1], encoding="utf-8") as f:
    walk(json.load(f), 1)
"""

JSON_GRAMMAR = r"""grammar JSON;

json : value EOF ;
obj : '{' pair (',' pair)* '}' | '{' '}' ;
pair : STRING ':' value ;
arr : '[' value (',' value)* ']' | '[' ']' ;
value : STRING | NUMBER | obj | arr | 'true' | 'false' | 'null' ;

STRING : '"' (ESC | SAFECODEPOINT)* '"' ;
fragment ESC : '\\' (["\\/bfnrt] | UNICODE) ;
fragment UNICODE : 'u' HEX HEX HEX HEX ;
fragment HEX : [0-9a-fA-F] ;
fragment SAFECODEPOINT : ~ ["\\\u0000-\u001F] ;
NUMBER : '-'? INT ('.' [0-9]+)? EXP? ;
fragment INT : '0' | [1-9] [0-9]* ;
fragment EXP : [Ee] [+-]? [0-9]+ ;
WS : [ \t\n\r]+ -> skip ;
"""


def json_danger(setup: Setup) -> Input:
    """A settings document whose one object `"mode": "danger"` at depth 3 or more crashes a
    small checker (a decoy at depth 2 does not)."""
    rng = random.Random(3)
    modes = ["safe", "fast", "strict", "lenient"]
    services: list[object] = []
    for i in range(48):
        settings: dict[str, object] = {
            "mode": "danger" if i == 37 else rng.choice(modes),
            "retries": rng.randint(0, 9),
            "limits": {"cpu": rng.randint(1, 16), "memory": f"{rng.randint(1, 64)}G"},
        }
        services.append(
            {
                "name": f"service-{i}",
                "enabled": rng.random() < 0.8,
                "settings": settings,
                "tags": [rng.choice(["web", "db", "cache", "queue", "batch"]) for _ in range(3)],
                "ports": [{"port": 8000 + i * 10 + k, "proto": "tcp"} for k in range(2)],
            }
        )
    document = {
        "version": 3,
        "mode": "danger",  # depth 1: the checker does not mind
        "defaults": {"mode": "danger", "retries": 3},  # depth 2: nor here
        "services": services,
    }
    return Input(
        name="json",
        filename="settings.json",
        data=(json.dumps(document, indent=2) + "\n").encode(),
        check="@PY@ @HERE@/checker.py settings.json 2>&1 | grep -q 'RuntimeError: danger mode'",
        about='a checker raises `RuntimeError: danger mode` (an object with `"mode": "danger"` '
        "nested at depth 3 or more); a JSON error is not interesting",
        helpers={"checker.py": JSON_CHECKER},
        antlr=(JSON_GRAMMAR, "json"),
        book_grammar="JSON_EBNF_GRAMMAR",
    )


def toml_twice(setup: Setup) -> Input:
    """A pyproject.toml that Python's tomllib rejects: one table declared twice, far apart."""
    rng = random.Random(11)
    parts = [
        '[project]\nname = "geometry"\nversion = "1.4.2"\nrequires-python = ">=3.11"\n'
        "dependencies = [\n"
        + "".join(f'    "package-{i}>={rng.randint(1, 9)}.{i}",\n' for i in range(25))
        + "]\n"
    ]
    tools = [f"tool{i}" for i in range(70)]
    for i, tool in enumerate(tools):
        parts.append(
            f"\n[tool.{tool}]\n"
            f"line-length = {rng.choice([79, 88, 100, 120])}\n"
            f'target = "py3{rng.randint(8, 13)}"\n'
            f"strict = {rng.choice(['true', 'false'])}\n"
            f'paths = ["src/{tool}", "tests/{tool}"]\n'
        )
        parts.append(f'\n[[tool.{tool}.overrides]]\nmodule = "{tool}.*"\nignore = true\n')
        if i == 5:
            parts.append("\n[tool.coverage.report]\nshow_missing = true\nfail_under = 90\n")
    parts.append('\n[tool.coverage.report]\nexclude_lines = ["pragma: no cover"]\n')
    return Input(
        name="toml",
        filename="pyproject.toml",
        data="".join(parts).encode(),
        check=(
            "@PY@ -c \"import tomllib; tomllib.load(open('pyproject.toml','rb'))\" 2>&1 "
            "| grep -q \"Cannot declare ('tool', 'coverage', 'report') twice\""
        ),
        about="Python's `tomllib` still refuses the file: "
        "\"Cannot declare ('tool', 'coverage', 'report') twice\"",
    )


def xml_entity(setup: Setup) -> Input:
    """An RSS feed that xml.etree cannot parse: one `&nbsp;`, an entity XML does not define."""
    rng = random.Random(8)
    items = []
    for i in range(60):
        text = "&nbsp;" if i == 41 else rng.choice(["&amp;", "&lt;", "&gt;", "&quot;", " "])
        items.append(
            f"  <item>\n    <title>Release {i}.{rng.randint(0, 9)} notes</title>\n"
            f"    <link>https://example.org/releases/{i}</link>\n"
            f"    <description>Fixes{text}and features for {i}</description>\n"
            f"    <pubDate>Mon, {1 + i % 28:02d} Jan 2024 10:00:00 GMT</pubDate>\n  </item>\n"
        )
    feed = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0">\n<channel>\n'
        "  <title>Releases</title>\n" + "".join(items) + "</channel>\n</rss>\n"
    )
    return Input(
        name="xml",
        filename="feed.xml",
        data=feed.encode(),
        check=(
            "@PY@ -c \"import xml.etree.ElementTree as E; E.parse('feed.xml')\" 2>&1 "
            "| grep -q 'ParseError: undefined entity'"
        ),
        about='`xml.etree.ElementTree.parse` still fails with "undefined entity"',
    )


LOG_CHECKER = """\
import json
import sys

open_now = set()
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        if not line.strip():
            continue
        event = json.loads(line)
        session = event["session"]
        if event["event"] == "open":
            if session in open_now:
                raise RuntimeError(f"session {session} opened twice")
            open_now.add(session)
        elif event["event"] == "close":
            open_now.discard(session)
"""


def log_reopened(setup: Setup) -> Input:
    """A server's event log of 1.2 MB, one JSON object a line: sessions open, act and close; in
    one place a session is opened again while it is open, which the log checker refuses (the
    two `open` lines are what it needs)."""
    rng = random.Random(1000)
    actions = ["read", "write", "seek", "stat", "list", "lock", "unlock"]
    lines, open_now, number = [], [], 0
    while sum(map(len, lines)) < 1_200_000:
        number += 1
        if not open_now or (len(open_now) < 40 and rng.random() < 0.3):
            session = f"s{number:06d}"
            open_now.append(session)
            event = {"event": "open", "session": session, "user": f"u{rng.randint(1, 500)}"}
        elif rng.random() < 0.2:
            session = open_now.pop(rng.randrange(len(open_now)))
            event = {"event": "close", "session": session}
        else:
            session = rng.choice(open_now)
            event = {
                "event": rng.choice(actions),
                "session": session,
                "bytes": rng.randint(0, 1 << 20),
            }
        event["t"] = 1_700_000_000 + number
        lines.append(json.dumps(event) + "\n")
        if number == 9_000:  # the one session opened again while it is open
            again = {"event": "open", "session": open_now[0], "user": "u1", "t": event["t"]}
            lines.append(json.dumps(again) + "\n")
    return Input(
        name="log",
        filename="events.jsonl",
        data="".join(lines).encode(),
        check="@PY@ @HERE@/checker.py events.jsonl 2>&1 "
        "| grep -q 'RuntimeError: session .* opened twice'",
        about="a log checker raises `RuntimeError: session ... opened twice`; a line that is no "
        "JSON object with `event` and `session` is not interesting",
        helpers={"checker.py": LOG_CHECKER},
    )


CSMITH_OPTIONS = ["--max-funcs", "4", "--max-block-depth", "3", "--max-expr-complexity", "6"]
C_WARNING = "[-Wbool-compare]"


def csmith_c(setup: Setup) -> Input:
    """A csmith program that gcc compiles with a -Wbool-compare warning: the first seed, from 1,
    whose program is 15–35 kB and draws it."""
    csmith, gcc = shutil.which("csmith"), shutil.which("gcc")
    if csmith is None or gcc is None:
        raise Unavailable("needs csmith and gcc (apt-get install -y csmith libcsmith-dev gcc)")
    include = next(
        (d for d in (Path("/usr/include/csmith"), Path("/usr/local/include/csmith")) if d.is_dir()),
        None,
    )
    if include is None:
        raise Unavailable("no csmith.h (apt-get install -y libcsmith-dev)")
    compile_ = [gcc, "-fsyntax-only", "-Wall", f"-I{include}"]
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp, "prog.c")
        for seed in range(1, 60):
            made = subprocess.run(  # in tmp: csmith leaves a platform.info where it runs
                [csmith, "--seed", str(seed), *CSMITH_OPTIONS], capture_output=True, cwd=tmp
            )
            if made.returncode != 0 or not 15_000 <= len(made.stdout) <= 35_000:
                continue
            program.write_bytes(made.stdout)
            done = subprocess.run([*compile_, str(program)], capture_output=True, text=True)
            if done.returncode == 0 and C_WARNING in done.stderr:
                break
        else:
            raise Unavailable(f"no csmith seed in 1–59 gives a program that warns {C_WARNING}")
    check = (
        f'out=$({shlex.join(compile_)} prog.c 2>&1) && printf "%s" "$out" '
        f"| grep -qF -- '{C_WARNING}'"
    )
    return Input(
        name="c",
        filename="prog.c",
        data=made.stdout,
        check=check,
        about=f"`csmith --seed {seed} {' '.join(CSMITH_OPTIONS)}`; gcc compiles it (exit 0) "
        f"with a `{C_WARNING}` warning",
        is_c=True,
    )


INPUTS: dict[str, Callable[[Setup], Input]] = {
    "html": mozilla_html,
    "python": python_blocks,
    "json": json_danger,
    "toml": toml_twice,
    "xml": xml_entity,
    "c": csmith_c,
    "log": log_reopened,
}
