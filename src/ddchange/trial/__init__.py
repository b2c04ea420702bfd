"""Where outcomes come from: the scratch tree, the build-and-test runner, and the journal that
records every run."""
