"""click 8.0.0: four regressions fixed together in 8.0.1, one test each, and one test that
passes on both releases; each test's result goes to report.xml (JUnit XML).

- resolve_name: Group.resolve_command returns ``cmd.name``, so a subcommand added under another
  name runs under its own name and misses its ``default_map`` entry (#1895).
- nargs_envvar: an ``nargs=-1`` argument with an ``envvar`` takes the environment's value even
  when the command line gives values (#1903).
- flag_value_type: a flag option with ``flag_value=1`` and no type passes the string "1", not 1:
  its type is guessed from the default, not from ``flag_value`` (#1886).
- invalid_default_help: ``--help`` fails when an option's default is not valid for its type
  (#1889).
- plain_option: an option with a default and a value given (passes on both).

Exit 0: all pass; 1: some test sees its regression; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import Unexpected, suite  # noqa: E402


def invoke(command, args, **extra):
    from click.testing import CliRunner

    return CliRunner().invoke(command, args, **extra)


def resolve_name():
    import click

    @click.group()
    def cli():
        pass

    @click.command()
    @click.option("--x", default="plain")
    def sub(x):
        return x, click.get_current_context().info_name

    cli.add_command(sub, "alias")
    ctx = cli.make_context("cli", ["alias"], default_map={"alias": {"x": "mapped"}})
    got = cli.invoke(ctx)
    if got == ("plain", "sub"):
        raise AssertionError(f"the subcommand is resolved under its own name: {got}")
    if got != ("mapped", "alias"):
        raise Unexpected(got)


def nargs_envvar():
    import click

    @click.command()
    @click.argument("files", nargs=-1, envvar="FILES")
    def cli(files):
        click.echo(repr(files))

    got = invoke(cli, ["a", "b"], env={"FILES": "x y"}).output.strip()
    if got == "('x', 'y')":
        raise AssertionError("the environment's value replaces the command line's")
    if got != "('a', 'b')":
        raise Unexpected(got)


def flag_value_type():
    import click

    @click.command()
    @click.option("--one", "n", flag_value=1)
    def cli(n):
        click.echo(repr(n))

    got = invoke(cli, ["--one"]).output.strip()
    if got == "'1'":
        raise AssertionError("the flag's value 1 arrives as the string '1'")
    if got != "1":
        raise Unexpected(got)


def invalid_default_help():
    import click

    @click.command()
    @click.option("--n", type=int, default="abc", show_default=True)
    def cli(n):
        pass

    got = invoke(cli, ["--help"])
    if got.exit_code == 2 and "is not a valid integer" in got.output:
        raise AssertionError("--help fails on the invalid default")
    if got.exit_code != 0 or "[default: abc]" not in got.output:
        raise Unexpected(got.exit_code, got.output[-300:])


def plain_option():
    import click

    @click.command()
    @click.option("--name", default="world")
    def cli(name):
        click.echo(f"hello {name}")

    got = invoke(cli, ["--name", "you"]).output.strip()
    if got != "hello you":
        raise AssertionError(got)


TESTS = {
    "resolve_name": resolve_name,
    "nargs_envvar": nargs_envvar,
    "flag_value_type": flag_value_type,
    "invalid_default_help": invalid_default_help,
    "plain_option": plain_option,
}

if __name__ == "__main__":
    suite(TESTS, "click")
