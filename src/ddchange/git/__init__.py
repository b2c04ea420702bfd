"""Every git command ddchange runs: one small typed function per git operation.

Owns the conversation with git. This is the only package that imports GitPython (to locate the
repository) and the only one that starts git, always through `command.run`, with the one
environment policy, `environment`. Its modules:
- `command`: how git is started, and the environment of every process we start;
- `repository`: reading the user's repository (revisions, diff, blobs, history, blame);
- `scratch`: the scratch repository's git side (make it, its state, patches);
- `build`: repositories we build ourselves (samples, tests), with pinned identity and settings.
Callers use the names below, `from ddchange import git; git.diff_raw(...)`.
"""

from typing import TYPE_CHECKING

from ddchange.git.build import Signature, commit, init, is_merging, merge, stage_all, switch, tag
from ddchange.git.command import REDIRECTS, environment
from ddchange.git.repository import (
    CommitInfo,
    RawEntry,
    Span,
    TreeEntry,
    blame,
    changed_matching,
    changed_paths,
    commit_infos,
    commits,
    common_dir_at,
    diff_patch,
    diff_raw,
    first_changer,
    first_parent_changes,
    first_parents,
    is_ancestor,
    line_hunks,
    ls_tree,
    merge_base,
    object_namer,
    open_repo,
    parents,
    path_commits,
    pickaxe,
    read_blobs,
    resolve_commit,
)
from ddchange.git.scratch import (
    CheckoutSetup,
    borrowed_objects,
    bundle,
    checkout_forms,
    checkout_setup,
    clone_elsewhere,
    clone_scratch,
    common_dir,
    confined,
    converted_paths,
    modified_files,
    patched_files,
    prefix,
    remove_untracked,
    repository_state,
    reset_to,
    restore_files,
    tracked_files,
    tree_patch,
)

__all__ = [
    "REDIRECTS",
    "CheckoutSetup",
    "CommitInfo",
    "RawEntry",
    "Repo",
    "Signature",
    "Span",
    "TreeEntry",
    "blame",
    "borrowed_objects",
    "bundle",
    "changed_matching",
    "changed_paths",
    "checkout_forms",
    "checkout_setup",
    "clone_elsewhere",
    "clone_scratch",
    "commit",
    "commit_infos",
    "common_dir_at",
    "commits",
    "common_dir",
    "confined",
    "converted_paths",
    "diff_patch",
    "diff_raw",
    "environment",
    "first_changer",
    "first_parent_changes",
    "first_parents",
    "init",
    "is_ancestor",
    "line_hunks",
    "is_merging",
    "ls_tree",
    "object_namer",
    "merge",
    "merge_base",
    "modified_files",
    "open_repo",
    "parents",
    "patched_files",
    "path_commits",
    "pickaxe",
    "prefix",
    "read_blobs",
    "remove_untracked",
    "repository_state",
    "reset_to",
    "resolve_commit",
    "restore_files",
    "stage_all",
    "switch",
    "tag",
    "tracked_files",
    "tree_patch",
]

if TYPE_CHECKING:
    from git import Repo
