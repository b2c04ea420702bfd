"""The house rules that tools can check: mypy strict on src/, ruff lint and format, and the
import contracts of pyproject.toml (layers; a search that runs nothing; GitPython only in the
git layer)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# `lint-imports`, run by this interpreter wherever its console scripts were installed.
LINT_IMPORTS = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "mypy"],
        [sys.executable, "-m", "ruff", "check", "src", "tests", "benchmarks"],
        [sys.executable, "-m", "ruff", "format", "--check", "src", "tests", "benchmarks"],
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache"],
    ],
    ids=["mypy", "ruff-check", "ruff-format", "import-contracts"],
)
def test_tool_is_clean(command: list[str]) -> None:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_wide_records_are_built_by_keyword() -> None:
    """Every dataclass of src/ with more than three fields is kw_only: a record whose
    neighbours share a type (wall_time / command_time, tests_run / resumed) cannot be built
    with two of them swapped."""
    import ast

    wide = []
    for path in sorted((Path(__file__).parents[1] / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            for decorator in node.decorator_list:
                written = ast.unparse(decorator)
                fields = [
                    f
                    for f in node.body
                    if isinstance(f, ast.AnnAssign) and "ClassVar" not in ast.unparse(f.annotation)
                ]
                if "dataclass" in written and "kw_only=True" not in written and len(fields) > 3:
                    wide.append(f"{path.name}:{node.lineno} {node.name}")
    assert wide == []
