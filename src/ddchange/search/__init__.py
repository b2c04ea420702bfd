"""The pure search: delta debugging (ddmin, dd, bisect), the outcome cache, and the hierarchical
strategy. No I/O: the test is injected."""
