"""Which paths a tree may bring into the scratch tree: the rule git's own checkout applies
(`verify_path` in git's read-cache.c), with its NTFS and HFS+ protections both on.

History can come from anyone (a contributor's branch, a mirror), and a plain `git fetch` does
not check tree entries. A path with a `..`, `.` or empty component would reach outside the
scratch tree; a `.git` component (or a name that a case-insensitive, NTFS or HFS+ file system
reads as `.git`) would write into the scratch repository's own configuration, which the test's
git commands obey. git refuses to check out either; so does ddchange, before it writes anything.

Pure: no git, no file system.
"""

from __future__ import annotations

_SYMLINK = 0o120000
_BAD = ("//", "/./", "/../")  # an empty, "." or ".." component, in a path framed by slashes

# Code points that HFS+ leaves out when it compares names: ".g\u200cit" is ".git" there.
_HFS_IGNORED = dict.fromkeys(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)


def refusal(path: str, mode: int) -> str | None:
    """Why git's checkout would refuse a tree entry at `path` with `mode` (a few words for a
    message), or None if it would not."""
    framed = f"/{path}/"
    if path.isascii() and "git" not in path.lower() and not any(map(framed.__contains__, _BAD)):
        return None  # the common case, decided at a glance (a whole tree is checked)
    components = path.split("/")
    for component in components:
        if component in ("", ".", ".."):
            return f"a {component!r} component" if component else "an empty component"
        if _names(component, "git", "git~1"):
            return f"a component that names .git ({component!r})"
    # A symlinked .gitmodules would let git read submodule settings from anywhere.
    if mode == _SYMLINK and _names(components[-1], "gitmodules", "gitmod~1"):
        return "a symbolic link named .gitmodules"
    return None


def _names(component: str, name: str, short: str) -> bool:
    """Whether `component` names the dot file `.name` on some file system git protects: in
    any case; on NTFS also with trailing dots and spaces, an alternate data stream (`:...`),
    as its 8.3 short name `short`, or as one of the parts a backslash separates there; on
    HFS+ also with code points it ignores."""
    hfs = component.translate(_HFS_IGNORED)
    if hfs.isascii() and hfs.lower() == "." + name:
        return True
    for part in component.split("\\"):
        stem = part.partition(":")[0].rstrip(". ").lower()
        if stem in ("." + name, short):
            return True
    return False
