"""Plain-text tables for the monthly reports."""


def format_table(headers, rows):
    """Rows of cells as aligned text columns, numbers right-aligned, with a header rule."""
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float)) for row in rows) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [c.rjust(w) if num and n else c.ljust(w) for c, w, num in zip(row, widths, numeric)]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
