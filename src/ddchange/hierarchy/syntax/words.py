"""Each language's reserved words, built-in types and contextual keywords (never a project's
name), and the small regular expressions for names that the scans share.
"""

from __future__ import annotations

import re

# Python ----------------------------------------------------------------------------------------

PY_IDENTS = frozenset({"identifier"})


# --- the fallback scan ------------------------------------------------------------------------
# Without a grammar, names come from identifiers `[A-Za-z_][A-Za-z0-9_]*` on the wanted lines
# (after blanking comments and string literals) and definitions from per-language regular
# expressions. A rule is a regex whose named groups say what the identifiers inside them are:
#   def     defined          defuse   defined and used (an imported name)
#   bind    neither (parameters, locals)
#   target  defined at module level, bound when local (language's `is_local` decides)
#   params  a parameter list: the language's `param` picks the name out of each parameter
#   imports comma-separated import items: `a as b` defines b and uses a, a plain item defines
#           and uses its last name (`first_imports`: its first, as Python's `import a.b`)
#   members comma-separated enum constants: the first name of each is defined
# A rule may carry a condition on its context (the lines before, a `{` on the next line).

IDENT = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*")


# Word lists ------------------------------------------------------------------------------------
# `reserved` words are never identifiers. Contextual keywords (Python's `match`, JS's `get`,
# `from`, Rust's `union`) can be names, so the grammar, which can tell, keeps them; the scan,
# which cannot, drops them.


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PY_RESERVED = _words(
    "False None True and as assert async await break class continue def del elif else except "
    "finally for from global if import in is lambda nonlocal not or pass raise return try while "
    "with yield"
)


C_RESERVED = _words(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while _Bool _Complex _Atomic _Noreturn _Static_assert "
    "_Thread_local _Alignas _Alignof"
)


C_BUILTIN_TYPES = _words(
    "bool size_t ssize_t ptrdiff_t intptr_t uintptr_t max_align_t wchar_t int8_t int16_t int32_t "
    "int64_t uint8_t uint16_t uint32_t uint64_t char8_t char16_t char32_t nullptr_t"
)


# Preprocessor directive words appear as plain tokens to the scan.
C_CONTEXTUAL = _words("define undef ifdef ifndef elif endif defined include line error pragma")


CPP_RESERVED = C_RESERVED | _words(
    "alignas alignof and and_eq asm bitand bitor catch class compl concept const_cast consteval "
    "constexpr constinit co_await co_return co_yield decltype delete dynamic_cast explicit export "
    "false friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private "
    "protected public reinterpret_cast requires static_assert static_cast template this "
    "thread_local throw true try typeid typename using virtual xor xor_eq"
)


CPP_CONTEXTUAL = C_CONTEXTUAL | _words("final override import module")


# Words that start a statement rather than a declaration (C, C++ and Java).
C_STATEMENT_WORDS = _words(
    "return else case goto throw delete new sizeof typedef using co_return co_yield if while for "
    "switch do assert yield"
)


JS_RESERVED = _words(
    "break case catch class const continue debugger default delete do else export extends false "
    "finally for function if import in instanceof new null return super switch this throw true "
    "try typeof var void while with yield let await undefined"
)


JS_CONTEXTUAL = _words("async static get set of from as")


TS_MODIFIERS = _words("public private protected readonly override declare abstract")


TS_RESERVED = JS_RESERVED | _words("enum interface implements")


TS_BUILTIN_TYPES = _words("any unknown never number string boolean symbol bigint object")


TS_CONTEXTUAL = (
    JS_CONTEXTUAL | TS_MODIFIERS | _words("type namespace module keyof infer is asserts satisfies")
)


GO_RESERVED = _words(
    "break case chan const continue default defer else fallthrough for func go goto if import "
    "interface map package range return select struct switch type var"
)


GO_BUILTIN_TYPES = _words(
    "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string "
    "uint uint8 uint16 uint32 uint64 uintptr any comparable true false nil iota"
)


RUST_RESERVED = _words(
    "as async await break const continue crate dyn else enum extern false fn for if impl in let "
    "loop match mod move mut pub ref return self Self static struct super trait true type unsafe "
    "use where while"
)


RUST_BUILTIN_TYPES = _words(
    "bool char str i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64"
)


RUST_CONTEXTUAL = _words("union macro_rules")


JAVA_RESERVED = _words(
    "abstract assert boolean break byte case catch char class const continue default do double "
    "else enum extends final finally float for goto if implements import instanceof int "
    "interface long native new package private protected public return short static strictfp "
    "super switch synchronized this throw throws transient try void volatile while true false null"
)


JAVA_CONTEXTUAL = _words("var record yield sealed permits")


# The fallback rules ----------------------------------------------------------------------------

NAME = r"[A-Za-z_$][\w$]*"


NAMES = rf"{NAME}(?:\s*,\s*{NAME})*"


C_TYPE_WORDS = r"(?:[A-Za-z_][\w:<>,]*[\s*&]+)+"
