"""click 8.0.0 regression: a subcommand is known by its command's name, not by the name it was
invoked with.

8.0.0's Group.resolve_command returns ``cmd.name`` instead of the name that was given, so a
command registered under another name (``add_command(cmd, "alias")``, or an aliasing group)
shows its own name in help text and looks up ``default_map`` under it. 8.0.1: "Resolving
commands returns the name that was given, not command.name, fixing an unintended change to
help text and default_map lookups" (click issue #1895).

Exit 0: the subcommand runs as "alias" with its default_map entry; 1: it runs as "sub" and
misses it; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(click):

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
    if got == ("mapped", "alias"):
        print("ok: the subcommand keeps the name it was invoked with")
        return 0
    if got == ("plain", "sub"):
        print("regression: the subcommand is resolved under its own name:", got)
        return 1
    print("unexpected result:", got)
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "click")
