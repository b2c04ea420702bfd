"""Text helpers for report titles and file names."""

import re
import unicodedata

SMALL_WORDS = frozenset({"a", "an", "and", "of", "the", "to", "in", "on", "for"})


def normalize_space(text):
    """Collapse runs of whitespace into single spaces and trim the ends."""
    return " ".join(text.split())


def slugify(text):
    """Lower-case ASCII words joined by hyphens: 'Hello, World!' -> 'hello-world'."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", folded.lower())
    return "-".join(words)


def is_blank(text):
    """True for empty or whitespace-only text."""
    return not text.strip()


def truncate(text, width, ellipsis="..."):
    """Shorten text to at most width characters, marking the cut with an ellipsis."""
    if width < len(ellipsis):
        raise ValueError(f"width {width} is smaller than the ellipsis {ellipsis!r}")
    if len(text) <= width:
        return text
    return text[: width - len(ellipsis)] + ellipsis


def title_case(text):
    """Capitalize each word, keeping short joining words lower case."""
    words = text.split()
    out = []
    for i, word in enumerate(words):
        if i > 0 and word.lower() in SMALL_WORDS:
            out.append(word.lower())
        else:
            out.append(word[:1].upper() + word[1:].lower())
    return " ".join(out)


def capitalize_first(text):
    """Upper-case the first character, leave the rest alone."""
    return text[:1].upper() + text[1:]


def center(text, width, fill=" "):
    """text centred in a field of width characters."""
    return text.center(width, fill)


def word_count(text):
    """Number of whitespace-separated words."""
    return len(text.split())


def reverse_words(text):
    """Words in reverse order, single-spaced."""
    return " ".join(reversed(text.split()))


def initials(name):
    """Upper-case initials of a name: 'ada king lovelace' -> 'AKL'."""
    return "".join(part[0].upper() for part in name.split() if part)


def char_count(text, chars):
    """How many characters of text are in chars."""
    return sum(1 for ch in text if ch in chars)
