"""Real C inputs for `benchmarks/reduce_peers.py`: crashes of the C compilers of this machine
(Debian 12: gcc 12.2.0, and clang 14.0.6 from `apt-get install -y clang-14`), each a bug from a
public issue tracker that this very version still has.

Each input is a csmith program (a fixed seed and fixed options, generated at run time as
`reduce_inputs.csmith_c` does) with a short trigger function of our own inserted among its
functions, just before `main`: the original is large (15–40 kB) and nearly all of it is noise a
reducer has to remove. The check compiles the file and asks for the crash's own signature (the
exit status of the crash and its ICE line or stack frames), so a syntax error, an ordinary
diagnostic or another crash is not interesting. The compiler runs under `timeout 10`, so a hang
is not interesting either.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from reduce_inputs import CSMITH_OPTIONS, Input, Setup, Unavailable

FILENAME = "prog.c"


def _csmith_include() -> Path:
    for d in (Path("/usr/include/csmith"), Path("/usr/local/include/csmith")):
        if d.is_dir():
            return d
    raise Unavailable("no csmith.h (apt-get install -y libcsmith-dev)")


def _tool(name: str, hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise Unavailable(f"needs {name} ({hint})")
    return path


def _crash_check(compile_: list[str], status: int, signature: list[str]) -> str:
    """A shell command: `compile_` on prog.c exits with `status` and prints every line of
    `signature` (fixed strings)."""
    out = f"out=$(timeout 10 {shlex.join(compile_)} {FILENAME} 2>&1)"
    greps = " && ".join(f"printf '%s' \"$out\" | grep -qF -- {shlex.quote(s)}" for s in signature)
    return f"{out}; test $? -eq {status} && {greps}"


def _insert(program: bytes, trigger: str) -> bytes:
    """`program` with `trigger` inserted just before its `main`."""
    at = program.find(b"\nint main ")
    if at < 0:
        raise Unavailable("a csmith program without `int main`")
    return program[: at + 1] + trigger.encode() + b"\n" + program[at + 1 :]


def _csmith_crash(
    name: str, compile_: list[str], trigger: str, check: str, what: str, first_seed: int
) -> Input:
    """The first csmith program (seed `first_seed`, then the next ones) of 15–40 kB that
    `compile_` compiles without complaint, with `trigger` inserted; `check` must hold on it."""
    csmith = _tool("csmith", "apt-get install -y csmith libcsmith-dev")
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp, FILENAME)
        for seed in range(first_seed, first_seed + 60):
            made = subprocess.run(
                [csmith, "--seed", str(seed), *CSMITH_OPTIONS],
                cwd=tmp,  # csmith writes a platform.info where it runs
                capture_output=True,
                check=False,
            )
            if made.returncode != 0 or not 15_000 <= len(made.stdout) <= 40_000:
                continue
            program.write_bytes(made.stdout)
            try:
                plain = subprocess.run(
                    [*compile_, FILENAME], cwd=tmp, capture_output=True, timeout=60
                )
            except subprocess.TimeoutExpired:
                continue
            if plain.returncode != 0:
                continue
            data = _insert(made.stdout, trigger)
            program.write_bytes(data)
            done = subprocess.run(["sh", "-c", check], cwd=tmp, capture_output=True)
            if done.returncode != 0:
                raise Unavailable(f"the compiler here does not crash as expected ({what})")
            break
        else:
            raise Unavailable(
                f"no csmith seed from {first_seed} on gives a program that compiles cleanly"
            )
    return Input(
        name=name,
        filename=FILENAME,
        data=data,
        check=check,
        about=f"`csmith --seed {seed} {' '.join(CSMITH_OPTIONS)}` with a trigger function "
        f"inserted before `main`; {what}",
        is_c=True,
    )


def _clang14() -> str:
    return _tool("clang-14", "apt-get install -y clang-14")


def _clang_ir(clang: str) -> list[str]:
    """clang-14 up to LLVM IR (the crashes below are all in IR generation), without writing
    crash reproducers to /tmp."""
    include = _csmith_include()
    flags = ["-fno-crash-diagnostics", "-w", f"-I{include}", "-S", "-emit-llvm"]
    return [clang, *flags, "-o", "/dev/null"]


DUMP_STRUCT_TRIGGER = """\
struct sensor_flags { unsigned armed : 1; unsigned mode : 3; unsigned gain : 5; short id; };

void dump_sensor_flags(void)
{
    struct sensor_flags fl = { 1, 5, 17, 42 };
    __builtin_dump_struct(&fl, &printf);
}
"""


def clang_dump_struct(setup: Setup) -> Input:
    """clang 14.0.6 (Debian 12's clang-14) segfaults generating code for `__builtin_dump_struct`
    on a struct with several bit-fields: https://github.com/llvm/llvm-project/issues/54462
    (reported on clang 13; the same crash as https://github.com/llvm/llvm-project/issues/49946).
    The builtin's old code generation (in CGBuiltin) mishandled bit-fields; clang 15
    reimplemented `__builtin_dump_struct` in Sema, which removed that code path. The check asks
    for exit 139 (SIGSEGV) with the frames `llvm::PointerType::get` and
    `CodeGenFunction::EmitBuiltinExpr`."""
    compile_ = _clang_ir(_clang14())
    check = _crash_check(
        compile_, 139, ["llvm::PointerType::get(", "CodeGenFunction::EmitBuiltinExpr("]
    )
    return _csmith_crash(
        "c-clang-dump-struct",
        compile_,
        DUMP_STRUCT_TRIGGER,
        check,
        "clang-14 segfaults in `EmitBuiltinExpr` → `llvm::PointerType::get` (exit 139) on "
        "`__builtin_dump_struct` of a struct with bit-fields (llvm-project#54462)",
        first_seed=100,
    )


VA_ARG_VLA_TRIGGER = """\
int *next_row(int width, ...)
{
    __builtin_va_list ap;
    __builtin_va_start(ap, width);
    int *row = __builtin_va_arg(ap, int[width]);
    __builtin_va_end(ap);
    return row;
}
"""


def clang_va_arg_vla(setup: Setup) -> Input:
    """clang 14.0.6 segfaults on `va_arg` of a variable-length array type whose result decays
    to a pointer: https://github.com/llvm/llvm-project/issues/119360 (reported on clang 19).
    The array is emitted as an aggregate copy, and the VLA's size was never computed because
    `EmitVariablyModifiedType` was only called on the scalar path; fixed by
    https://github.com/llvm/llvm-project/pull/119563 (clang 20), which calls it in `EmitVAArg`.
    The check asks for exit 139 (SIGSEGV) with the frame `CodeGenFunction::EmitAggregateCopy`
    and the crash in `llvm::BinaryOperator::Create` (the multiply by the missing size)."""
    compile_ = _clang_ir(_clang14())
    check = _crash_check(
        compile_, 139, ["llvm::BinaryOperator::Create(", "CodeGenFunction::EmitAggregateCopy("]
    )
    return _csmith_crash(
        "c-clang-va-arg-vla",
        compile_,
        VA_ARG_VLA_TRIGGER,
        check,
        "clang-14 segfaults in `EmitAggregateCopy` → `llvm::BinaryOperator::Create` (exit 139) "
        "on `va_arg` of a VLA type (llvm-project#119360)",
        first_seed=200,
    )


ATOMIC_ZERO_TRIGGER = """\
struct marker { };

void swap_markers(struct marker *a, struct marker *b)
{
    struct marker old;
    __atomic_exchange(a, b, &old, __ATOMIC_SEQ_CST);
}
"""


def clang_atomic_zero_size(setup: Setup) -> Input:
    """clang 14.0.6 dies of SIGFPE generating code for an atomic builtin on an object of size
    zero (an empty struct, a GNU C extension): https://github.com/llvm/llvm-project/issues/90330
    (also https://github.com/llvm/llvm-project/issues/62989). `EmitAtomicExpr` computes a
    remainder by the object's size; fixed by https://github.com/llvm/llvm-project/pull/91057
    (merged 2024, clang 19), which rejects a pointer to a zero-size object in Sema. The check
    asks for exit 136 (SIGFPE) with the frame `CodeGenFunction::EmitAtomicExpr`."""
    compile_ = _clang_ir(_clang14())
    check = _crash_check(compile_, 136, ["CodeGenFunction::EmitAtomicExpr("])
    return _csmith_crash(
        "c-clang-atomic-zero-size",
        compile_,
        ATOMIC_ZERO_TRIGGER,
        check,
        "clang-14 dies of SIGFPE (exit 136) in `EmitAtomicExpr` on `__atomic_exchange` of an "
        "empty struct (llvm-project#90330)",
        first_seed=300,
    )


TASKGROUP_TRIGGER = """\
extern int flush_batch(int);
int g_batches_done;

void run_batches(int n)
{
#pragma omp taskgroup
    {
        g_batches_done = n;
#pragma omp taskgroup
        g_batches_done += flush_batch(n);
    }
}
"""

GCC_ICE = "internal compiler error: in expand_gimple_stmt_1, at cfgexpand.cc:"


def gcc_omp_taskgroup(setup: Setup) -> Input:
    """gcc 12.2.0 (Debian 12.2.0-14+deb12u1) ICEs at -O0 -fopenmp -fexceptions on a
    `#pragma omp taskgroup` nested in another one: https://gcc.gnu.org/bugzilla/show_bug.cgi?id=107001
    ("internal compiler error: in expand_gimple_stmt_1, at cfgexpand.cc", during the RTL pass
    `expand`). Fixed on GCC's trunk, with the regression test
    gcc/testsuite/c-c++-common/gomp/pr107001.c. The check asks for gcc's exit 1 and that ICE
    line (gcc exits 1 on an ICE as on any error, so the ICE line is what tells them apart)."""
    gcc = _tool("gcc", "apt-get install -y gcc")
    include = _csmith_include()
    compile_ = [gcc, "-O0", "-fopenmp", "-fexceptions", "-w", f"-I{include}", "-c"]
    compile_ += ["-o", "/dev/null"]
    check = _crash_check(compile_, 1, [GCC_ICE])
    return _csmith_crash(
        "c-gcc-ice-omp-taskgroup",
        compile_,
        TASKGROUP_TRIGGER,
        check,
        f"gcc 12.2 at -O0 -fopenmp -fexceptions fails with `{GCC_ICE}...` (exit 1) on nested "
        "`omp taskgroup` (GCC PR c/107001)",
        first_seed=1,
    )


INPUTS: dict[str, Callable[[Setup], Input]] = {
    "c-gcc-ice-omp-taskgroup": gcc_omp_taskgroup,
    "c-clang-dump-struct": clang_dump_struct,
    "c-clang-va-arg-vla": clang_va_arg_vla,
    "c-clang-atomic-zero-size": clang_atomic_zero_size,
}
