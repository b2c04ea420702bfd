"""From two revisions to change units: the diff split into hunks and line changes, how a
set of them becomes file contents, and which commits brought each."""
