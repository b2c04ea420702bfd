"""Real failing inputs for `benchmarks/reduce_peers.py`, in Python and in structured data: crashes
of real programs from PyPI, each pinned at the version that had the bug, from a public issue.

Each input is made here at run time: a Python module is a source file of the pinned package itself
(as installed in its venv) with a trigger written here inserted; a data file is generated with a
fixed random seed around its trigger. Each check runs the pinned package from a venv of its own
(`Setup.venv`) and matches the crash's own signature (exception type and message, or the internal
error text), so a plain syntax or parse error of a candidate, or another crash, is not interesting.
"""

from __future__ import annotations

import random
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from reduce_inputs import Input, Setup, Unavailable


def _module_source(python: Path, module: str) -> str:
    """The source text of `module` as installed for `python`."""
    code = "import importlib.util, sys; print(importlib.util.find_spec(sys.argv[1]).origin)"
    done = subprocess.run(
        [str(python), "-c", code, module], capture_output=True, text=True, timeout=60
    )
    origin = done.stdout.strip()
    if done.returncode != 0 or not origin.endswith(".py"):
        raise Unavailable(f"no source file of `{module}` for {python}")
    return Path(origin).read_text(encoding="utf-8")


def _insert(host: str, trigger: str, at: float = 0.5) -> str:
    """`host` with `trigger` (top-level code) inserted before the first top-level `def` or
    `class` after the fraction `at` of the text."""
    start = int(len(host) * at)
    spots = [i for i in (host.find("\ndef ", start), host.find("\nclass ", start)) if i >= 0]
    if not spots:
        raise Unavailable("no top-level definition to insert the trigger before")
    i = min(spots) + 1
    return host[:i] + trigger.strip("\n") + "\n\n\n" + host[i:]


def _traceback_check(python: Path, command: str, frame: str, last: str) -> str:
    """A check: `command` (run with the pinned `python`) fails with a traceback that has a
    frame line matching the regular expression `frame` and ends with the line `last`."""
    return (
        f"out=$(timeout 10 {shlex.quote(str(python))} {command} 2>&1); "
        f"printf '%s\\n' \"$out\" | grep -q {shlex.quote(frame)} && "
        f"printf '%s\\n' \"$out\" | grep -qxF {shlex.quote(last)}"
    )


# -- Python -------------------------------------------------------------------------------------

BLACK_TRIGGER = """
def _sum_positive(rows):
    total = 0
    while rows:
        # fmt: off
        if rows[ -1 ] > 0 :
            # fmt: on
            total += rows.pop()
        else:
            rows.pop()
    return total
"""

BLACK_RUNNER = """\
import sys
import tempfile

import black

with tempfile.TemporaryDirectory() as tmp:
    tempfile.tempdir = tmp  # black writes its diff log there; gone at exit
    with open(sys.argv[1], encoding="utf-8") as f:
        source = f.read()
    try:
        black.format_file_contents(source, fast=False, mode=black.Mode())
    except black.NothingChanged:
        pass
"""

BLACK_ERROR = "INTERNAL ERROR: Black produced code that is not equivalent to the source"


def py_black_fmt_off(setup: Setup) -> Input:
    """black 22.8.0 crashes when `# fmt: off` stands before an `if` that has an `else` and the
    matching `# fmt: on` is inside the `if` block, one level deeper: "INTERNAL ERROR: Black
    produced code that is not equivalent to the source".

    Issue: https://github.com/psf/black/issues/3184 (fixed by PR #3281, "Fix a crash when
    `# fmt: on` is used on a different block level than `# fmt: off`"). Buggy: black 22.8.0;
    fixed: black 22.10.0. The original is black 22.8.0's own `black/comments.py` with a function
    written here inserted in the middle."""
    python = setup.venv("black==22.8.0", "click==8.1.3")
    data = _insert(_module_source(python, "black.comments"), BLACK_TRIGGER)
    check = (
        f"timeout 10 {shlex.quote(str(python))} @HERE@/run_black.py comments.py 2>&1 "
        f"| grep -qF {shlex.quote(BLACK_ERROR)}"
    )
    return Input(
        name="py-black-fmt-off",
        filename="comments.py",
        data=data.encode(),
        check=check,
        about=f"black 22.8.0 (`format_file_contents`, safe mode) still fails with "
        f'"{BLACK_ERROR}" (psf/black#3184)',
        helpers={"run_black.py": BLACK_RUNNER},
    )


PYFLAKES_PRINT_TRIGGER = """
def _rescaled(values, factor=2):
    print *= factor
    return [value * factor for value in values]
"""

PYFLAKES_PRINT_ERROR = "AttributeError: 'Name' object has no attribute '_pyflakes_parent'"


def py_pyflakes_print(setup: Setup) -> Input:
    """pyflakes 3.0.0 crashes on an augmented assignment to the builtin `print` (it takes it for
    a Python 2 `print >>` statement): `AttributeError: 'Name' object has no attribute
    '_pyflakes_parent'` in `AUGASSIGN`.

    Issue: https://github.com/PyCQA/pyflakes/issues/744 ("Internal error on invalid print (py2)
    statement"). Buggy: pyflakes 3.0.0; fixed: pyflakes 3.0.1 ("Fix crash on augmented assign to
    `print` builtin"). The original is pyflakes 3.0.0's own `pyflakes/test/test_imports.py` with
    a function written here inserted in the middle."""
    python = setup.venv("pyflakes==3.0.0")
    data = _insert(_module_source(python, "pyflakes.test.test_imports"), PYFLAKES_PRINT_TRIGGER)
    return Input(
        name="py-pyflakes-print",
        filename="test_imports.py",
        data=data.encode(),
        check=_traceback_check(
            python, "-m pyflakes test_imports.py", ", in AUGASSIGN$", PYFLAKES_PRINT_ERROR
        ),
        about=f"pyflakes 3.0.0 still crashes in `AUGASSIGN` with `{PYFLAKES_PRINT_ERROR}` "
        "(PyCQA/pyflakes#744)",
    )


PYFLAKES_GLOBAL_TRIGGER = """
class _PluginRegistry:
    global _plugins
    _plugins = {}

    def register(self, name, plugin):
        _plugins[name] = plugin
"""

PYFLAKES_GLOBAL_ERROR = (
    "AttributeError: 'ClassScope' object has no attribute 'indirect_assignments'"
)


def py_pyflakes_global(setup: Setup) -> Input:
    """pyflakes 3.3.1 crashes on a `global` statement in a class body (its new check for unused
    `global` names assumes a function scope): `AttributeError: 'ClassScope' object has no
    attribute 'indirect_assignments'` in `GLOBAL`.

    Issue: https://github.com/PyCQA/pyflakes/issues/834. Buggy: pyflakes 3.3.1;
    fixed: pyflakes 3.3.2. The original is pyflakes 3.3.1's own
    `pyflakes/test/test_undefined_names.py` with a class written here inserted in the middle."""
    python = setup.venv("pyflakes==3.3.1")
    host = _module_source(python, "pyflakes.test.test_undefined_names")
    return Input(
        name="py-pyflakes-global",
        filename="test_undefined_names.py",
        data=_insert(host, PYFLAKES_GLOBAL_TRIGGER).encode(),
        check=_traceback_check(
            python, "-m pyflakes test_undefined_names.py", ", in GLOBAL$", PYFLAKES_GLOBAL_ERROR
        ),
        about=f"pyflakes 3.3.1 still crashes in `GLOBAL` with `{PYFLAKES_GLOBAL_ERROR}` "
        "(PyCQA/pyflakes#834)",
    )


# -- structured data ----------------------------------------------------------------------------

CRATES = ["serde", "tokio", "clap", "regex", "anyhow", "rand", "log", "tracing", "hyper", "bytes"]
CRATES += ["futures", "reqwest", "chrono", "itertools", "thiserror", "url", "libc", "syn", "quote"]
FEATURES = ["std", "derive", "full", "rt", "macros", "json", "tls", "alloc", "serde", "unstable"]

TOMLKIT_TRIGGER = """
  [[lints.rust.allow]]
  name = "dead_code"
  reason = "generated bindings"

[lints.rust]
unsafe_code = "forbid"
"""

TOMLKIT_ERROR = "ParseError: 'OutOfOrderTableProxy' object has no attribute 'trivia'"


def toml_tomlkit_indented_aot(setup: Setup) -> Input:
    """tomlkit 0.11.7 fails on valid TOML: an indented array-of-tables header `[[a.b.c]]`
    directly followed by its parent table `[a.b]` (neither declared before) makes
    `tomlkit.parse` raise `ParseError: 'OutOfOrderTableProxy' object has no attribute 'trivia'`
    (an AttributeError inside). With one level more (`[[a.b.c.d]]`, `[a.b.c]`) it still fails
    in 0.11.8 and 0.12.0; the trigger here has the issue's depth.

    Issue: https://github.com/python-poetry/tomlkit/issues/263 ("Parser fails on OutOfOrderTable
    with leading whitespace"). Buggy: tomlkit 0.11.7 (and 0.11.6); fixed: tomlkit 0.11.8. The
    original is a Cargo workspace manifest generated here (seed 263) around that pair."""
    rng = random.Random(263)
    parts = [
        '[package]\nname = "workbench"\nversion = "0.14.2"\nedition = "2021"\n'
        'license = "MIT OR Apache-2.0"\nrust-version = "1.70"\n',
        "\n[dependencies]\n",
    ]
    for i in range(120):
        crate = f"{rng.choice(CRATES)}-{i}"
        version = f"{rng.randint(0, 3)}.{rng.randint(0, 40)}"
        if rng.random() < 0.5:
            feats = ", ".join(f'"{f}"' for f in rng.sample(FEATURES, rng.randint(1, 3)))
            optional = ", optional = true" if rng.random() < 0.3 else ""
            parts.append(f'{crate} = {{ version = "{version}", features = [{feats}]{optional} }}\n')
        else:
            parts.append(f'{crate} = "{version}"\n')
    parts.append('\n[features]\ndefault = ["std"]\n')
    for i in range(30):
        needs = ", ".join(f'"{rng.choice(CRATES)}-{rng.randint(0, 119)}"' for _ in range(3))
        parts.append(f"feature-{i} = [{needs}]\n")
    parts.append('\n[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n')
    for i in range(60):
        if i == 37:
            parts.append(TOMLKIT_TRIGGER)
        kind = rng.choice(["bin", "example", "bench", "test"])
        parts.append(
            f'\n[[{kind}]]\nname = "{kind}-{i}"\npath = "src/{kind}/{kind}_{i}.rs"\n'
            f"harness = {rng.choice(['true', 'false'])}\n"
            f'required-features = ["feature-{rng.randint(0, 29)}"]\n'
        )
    for profile in ["dev", "release", "test", "bench"]:
        parts.append(
            f"\n[profile.{profile}]\nopt-level = {rng.randint(0, 3)}\n"
            f"debug = {rng.choice(['true', 'false'])}\nlto = {rng.choice(['true', 'false'])}\n"
            f"codegen-units = {rng.choice([1, 4, 16, 256])}\n"
        )
    python = setup.venv("tomlkit==0.11.7")
    code = "import sys, tomlkit; tomlkit.parse(open(sys.argv[1], encoding='utf-8').read())"
    check = (
        f"timeout 10 {shlex.quote(str(python))} -c {shlex.quote(code)} Cargo.toml 2>&1 "
        f"| grep -qF {shlex.quote(TOMLKIT_ERROR)}"
    )
    return Input(
        name="toml-tomlkit-indented-aot",
        filename="Cargo.toml",
        data="".join(parts).encode(),
        check=check,
        about=f"tomlkit 0.11.7's `parse` still raises `{TOMLKIT_ERROR}` "
        "(python-poetry/tomlkit#263); any other parse error is not interesting",
    )


YAMLLINT_RUNNER = """\
import sys

from yamllint import linter
from yamllint.config import YamlLintConfig

conf = YamlLintConfig("extends: default")
with open(sys.argv[1], encoding="utf-8") as f:
    for _ in linter.run(f, conf):
        pass
"""

YAMLLINT_ERROR = "IndexError: pop from empty list"

YAMLLINT_TRIGGER = "finalizers: [kubernetes.io/pvc-protection]] ]\n"

IMAGES = ["nginx", "redis", "postgres", "busybox", "python", "node", "envoy", "grafana"]


def yaml_yamllint_stray_bracket(setup: Setup) -> Input:
    """yamllint 1.26.3 crashes on YAML with closing brackets `]` that close more flow sequences
    than were opened: its `key-duplicates` rule pops an empty stack, `IndexError: pop from empty
    list` in `key_duplicates.check`, instead of reporting the syntax error.

    Issue: https://github.com/adrienverge/yamllint/issues/452 ("yamllint breaks on some files in
    yaml-test-suite"). Buggy: yamllint 1.26.3 (with PyYAML 6.0.1); fixed: yamllint 1.27.0. The
    original is a stream of Kubernetes manifests generated here (seed 452); one
    Deployment has a top-level `finalizers` list followed by two stray `]`."""
    rng = random.Random(452)
    docs = []
    for i in range(36):
        name = f"svc-{i:02d}"
        image = rng.choice(IMAGES)
        ports = ", ".join(str(rng.choice([80, 443, 8080, 9090, 6379, 5432])) for _ in range(2))
        args = f'["--workers", "{rng.randint(1, 16)}"]'
        env = "".join(
            f'            - name: VAR_{k}\n              value: "{rng.randint(0, 9999)}"\n'
            for k in range(rng.randint(1, 4))
        )
        docs.append(
            f"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n"
            f"  labels:\n    app: {name}\n    tier: {rng.choice(['web', 'db', 'cache'])}\n"
            f"spec:\n  replicas: {rng.randint(1, 5)}\n  selector:\n    matchLabels:\n"
            f"      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n"
            f"    spec:\n      containers:\n        - name: {image}\n"
            f"          image: {image}:{rng.randint(1, 20)}.{rng.randint(0, 9)}\n"
            f"          args: {args}\n          ports: [{ports}]\n          env:\n{env}"
        )
        if i == 21:
            docs.append(YAMLLINT_TRIGGER)
        if rng.random() < 0.5:
            docs.append(
                f"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n"
                f"  selector:\n    app: {name}\n  ports:\n    - port: {rng.choice([80, 443])}\n"
                f"      targetPort: {rng.choice([8080, 9090])}\n"
            )
    python = setup.venv("yamllint==1.26.3", "PyYAML==6.0.1")
    frame = r'key_duplicates\.py", line [0-9]*, in check$'
    check = _traceback_check(python, "@HERE@/run_yamllint.py manifests.yaml", frame, YAMLLINT_ERROR)
    return Input(
        name="yaml-yamllint-stray-bracket",
        filename="manifests.yaml",
        data="".join(docs).encode(),
        check=check,
        about=f"yamllint 1.26.3 (default rules) still crashes in `key_duplicates.check` with "
        f"`{YAMLLINT_ERROR}` (adrienverge/yamllint#452); its other crashes are not interesting",
        helpers={"run_yamllint.py": YAMLLINT_RUNNER},
    )


JSON5_ERROR = r"^ValueError: could not convert string to float: '--[0-9.]*'$"
LAYERS = ["terrain", "roads", "water", "buildings", "labels", "poi", "transit", "landuse"]


def json5_double_minus(setup: Setup) -> Input:
    """json5 0.10.0 does not reject a number with two leading minus signs (`--0.75`): its parser
    accepts it and converting it fails later, `ValueError: could not convert string to float:
    '--0.75'` in `_walk_ast`, instead of the syntax error (`<string>:N Unexpected "-" at column
    M`) it reports from 0.11.0 on.

    Issue: https://github.com/dpranke/pyjson5/issues/90 ("Unhandled exceptions when calling load
    with malformed data"). Buggy: json5 0.10.0; fixed: json5 0.11.0. The original is a JSON5 map
    style (comments, unquoted keys, single quotes, hex numbers, trailing commas) generated here
    (seed 90); one layer's `offset` is `--0.75`."""
    rng = random.Random(90)
    lines = [
        "// Map style for the tile renderer, generated for benchmarks/reduce_peers.py.",
        "{",
        "  version: 8,",
        "  name: 'Streets (night)',",
        "  center: [13.4050, 52.5200],",
        "  zoom: +11.5,",
        "  sources: {",
    ]
    for i in range(12):
        lines += [
            f"    'source-{i}': {{",
            f"      type: '{rng.choice(['vector', 'raster', 'geojson'])}',",
            f"      url: 'https://tiles.example.org/v{rng.randint(1, 4)}/{i}.json',",
            f"      maxzoom: {rng.randint(12, 22)},",
            "    },",
        ]
    lines += ["  },", "  layers: ["]
    for i in range(64):
        layer = rng.choice(LAYERS)
        offset = "--0.75" if i == 41 else f"{rng.uniform(-2, 2):.2f}"
        lines += [
            f"    // {layer} layer {i}",
            "    {",
            f"      id: '{layer}-{i}',",
            f"      source: 'source-{rng.randint(0, 11)}',",
            f"      minzoom: {rng.randint(0, 14)},",
            "      paint: {",
            f"        color: 0x{rng.randint(0, 0xFFFFFF):06X},",
            f"        opacity: {rng.random():.3f},",
            f"        offset: {offset},",
            f"        width: [{rng.randint(1, 4)}, {rng.randint(4, 12)}],",
            "      },",
            f"      visible: {rng.choice(['true', 'false'])},",
            "    },",
        ]
    lines += ["  ],", "}", ""]
    python = setup.venv("json5==0.10.0")
    code = "import sys, json5; json5.loads(open(sys.argv[1], encoding='utf-8').read())"
    return Input(
        name="json5-double-minus",
        filename="style.json5",
        data="\n".join(lines).encode(),
        check=(
            f"out=$(timeout 10 {shlex.quote(str(python))} -c {shlex.quote(code)} style.json5 "
            "2>&1); printf '%s\\n' \"$out\" | grep -q ', in _walk_ast$' && "
            f"printf '%s\\n' \"$out\" | grep -q {shlex.quote(JSON5_ERROR)}"
        ),
        about="json5 0.10.0's `loads` still fails in `_walk_ast` with `ValueError: could not "
        "convert string to float: '--...'` (dpranke/pyjson5#90); its syntax errors are not "
        "interesting",
    )


INPUTS: dict[str, Callable[[Setup], Input]] = {
    "py-black-fmt-off": py_black_fmt_off,
    "py-pyflakes-print": py_pyflakes_print,
    "py-pyflakes-global": py_pyflakes_global,
    "toml-tomlkit-indented-aot": toml_tomlkit_indented_aot,
    "yaml-yamllint-stray-bracket": yaml_yamllint_stray_bracket,
    "json5-double-minus": json5_double_minus,
}
