"""The man page, git-ddchange(1), written from the click commands themselves.

Owns turning the command tree (its usage lines, help texts, options and the exit-code table)
into roff. The wheel's build hook (hatch_build.py) calls `render` and installs the page as
share/man/man1/git-ddchange.1 and ddchange.1, so that `git ddchange --help` (which git turns
into `man git-ddchange`) and `man ddchange` find it once the environment's bin is on PATH.
"""

from __future__ import annotations

import inspect

import click

from ddchange import __version__
from ddchange.cli.messages import EXIT_CODES, TEST_EXIT_CODES


def render(group: click.Group) -> str:
    """The whole page, in roff, for `group` (the `ddchange` command) and its subcommands."""
    root = click.Context(group, info_name="ddchange", **group.context_settings)
    lines = [
        f'.TH GIT-DDCHANGE 1 "" "ddchange {__version__}" "ddchange manual"',
        ".SH NAME",
        "git-ddchange, ddchange \\- " + _escape(_summary(group)),
        ".SH SYNOPSIS",
        ".nf",
        *(_escape(line) for line in _synopsis(group, root)),
        ".fi",
        ".SH DESCRIPTION",
        *_paragraphs(group.help or ""),
        ".SH COMMANDS",
    ]
    for name in _names(group, root):
        command = group.get_command(root, name)
        assert command is not None  # listed by the group itself
        lines += _command(command, click.Context(command, info_name=name, parent=root))
    lines += [".SH EXIT STATUS"]
    for code, meaning in EXIT_CODES:
        lines += [".TP", f".B {code}", _escape(meaning)]
    lines += [".PP", "The test command's exit codes, as git bisect run reads them:"]
    for exits, meaning in TEST_EXIT_CODES:
        lines += [".TP", f".B {exits}", _escape(meaning)]
    lines += [".SH SEE ALSO", "git-bisect(1), git-diff(1)", ""]
    return "\n".join(lines)


def _summary(group: click.Group) -> str:
    first = (group.help or "").strip().splitlines()[0].rstrip(".")
    return first[:1].lower() + first[1:]


def _names(group: click.Group, root: click.Context) -> list[str]:
    """The subcommands, `run` (the search itself) first."""
    return sorted(group.list_commands(root), key=lambda name: (name != "run", name))


def _synopsis(group: click.Group, root: click.Context) -> list[str]:
    """Every command's usage line, `git ddchange` first."""
    usages = ["git ddchange GOOD..BAD [options] -- CMD [ARGS...]"]
    for name in _names(group, root):
        command = group.get_command(root, name)
        assert command is not None
        context = click.Context(command, info_name=name, parent=root)
        usages.append(command.get_usage(context).removeprefix("Usage: "))
    return usages


def _command(command: click.Command, context: click.Context) -> list[str]:
    usage = command.get_usage(context).removeprefix("Usage: ")
    lines = [f".SS {_escape(usage)}", *_paragraphs(command.help or "")]
    for param in command.get_params(context):
        record = param.get_help_record(context)
        if isinstance(param, click.Option) and record is not None:
            names, meaning = record
            lines += [".TP", f".B {_escape(names)}", _escape(meaning)]
    return lines  # the epilog is the exit-code table: EXIT STATUS has it


def _paragraphs(text: str) -> list[str]:
    """Click's help text as roff: paragraphs, and `\\b` blocks kept as they are written."""
    lines: list[str] = []
    for block in inspect.cleandoc(text).split("\n\n"):
        if block.startswith("\b\n"):
            lines += [".PP", ".nf", *(_escape(line) for line in block[2:].splitlines()), ".fi"]
        elif block.strip():
            lines += [".PP", _escape(" ".join(block.split()))]
    return lines


def _escape(text: str) -> str:
    """`text` safe in roff: backslashes and dashes escaped, no line starting a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text
