"""How change units are grouped (file, function, hunk, line) and what they need from each
other: the syntax of each language, and the dependencies read from it."""
