"""The fair pair: the lesson's kernels with unsigned indices compute, load and synchronise exactly as
the lesson's do, and numba gives them no negative-index (wrap-around) code."""
import ast
import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import operands
from numba import cuda, uint64  # globals, as in a notebook: the simulator swaps module globals only

import tiledlab
from tiledlab.core import fair, kernels
from tiledlab.core.formulas import naive_loads, tiled_loads
from tiledlab.core.registry import KERNELS, predicted
from tiledlab.counting import count_loads

SHAPES = [(5, 23, 7), (13, 9, 17), (1, 4, 1), (33, 17, 45)]
PAIRS = [("naive", "naive_unsigned"), ("tiled", "tiled_unsigned")]


@pytest.mark.parametrize("kernel", ["naive_unsigned", "tiled_unsigned"])
@pytest.mark.parametrize("M,K,N", SHAPES)
@pytest.mark.parametrize("T", [1, 4, 8, 16])
def test_matches_numpy(rng, kernel, M, K, N, T):
    A, B = operands(rng, M, K, N)
    C = tiledlab.matmul(A, B, kernel=kernel, tile=T)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("M,K,N", SHAPES)
@pytest.mark.parametrize("T", [4, 8])
def test_loads_equal_the_formulas_and_no_hazards(rng, M, K, N, T):
    A, B = operands(rng, M, K, N)
    naive, tiled = count_loads("naive_unsigned", A, B, T), count_loads("tiled_unsigned", A, B, T)
    assert {"A": naive.A, "B": naive.B} == naive_loads(M, K, N)
    assert {"A": tiled.A, "B": tiled.B} == tiled_loads(M, K, N, T)
    assert set(naive.hazards.values()) == set(tiled.hazards.values()) == {0}


@pytest.mark.parametrize("lesson,unsigned", PAIRS)
def test_counted_exactly_like_the_lesson_kernel(rng, lesson, unsigned):
    A, B = operands(rng, 13, 9, 17)
    mine, theirs = count_loads(unsigned, A, B, 4), count_loads(lesson, A, B, 4)
    for field in ("thread_loads", "shared_reads", "shared_stores"):
        np.testing.assert_array_equal(getattr(mine, field), getattr(theirs, field))
    for op in ("A", "B"):
        np.testing.assert_array_equal(mine.maps[op], theirs.maps[op])


def test_the_ladder_formula_of_naive_unsigned_is_the_naive_one():
    assert predicted("naive_unsigned", 64, 64, 64) == predicted("naive", 64, 64, 64)
    assert predicted("tiled_unsigned", 64, 64, 64, tile=8) == predicted("tiled", 64, 64, 64, tile=8)


def test_registered_with_an_idea():
    assert "unsigned" in KERNELS["naive_unsigned"].idea and "unsigned" in KERNELS["tiled_unsigned"].idea


# --- only the index arithmetic differs ------------------------------------------------------------

BOOKKEEPING = {"k", "k0", "t", "M", "K", "N", "T"}  # loop counters and sizes: written differently


class _Plain(ast.NodeTransformer):
    """Casts removed and the unsigned kernels' names for constants replaced by the lesson's."""

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("uint64", "uint32") and len(node.args) == 1:
            return node.args[0]
        return node

    def visit_Name(self, node):
        return ast.copy_location(ast.Name({"tile": "T", "ONE": "1"}.get(node.id, node.id), node.ctx), node)


def _targets(statement):
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def statements(kernel):
    """Every statement of a kernel but its loops' headers and bookkeeping, casts removed, in order:
    the accesses, guards, arithmetic and barriers that must be the same in both of a pair."""
    tree = _Plain().visit(ast.parse(textwrap.dedent(inspect.getsource(kernel.py_func))))
    found = []

    def walk(body):
        for s in body:
            if isinstance(s, (ast.For, ast.While)):
                walk(s.body)
            elif isinstance(s, ast.If):
                found.append("if " + ast.unparse(s.test))
                walk(s.body)
            elif not (_targets(s) and _targets(s) <= BOOKKEEPING):
                found.append(ast.unparse(s))
    walk(tree.body[0].body)
    return found


@pytest.mark.parametrize("lesson,unsigned", PAIRS)
def test_only_the_index_arithmetic_differs_from_the_lesson(lesson, unsigned):
    mine, theirs = statements(getattr(fair, unsigned)), statements(getattr(kernels, lesson))
    assert mine == theirs
    assert any("A[" in s for s in mine) and any("C[" in s for s in mine)  # the accesses were compared


def test_the_statement_check_sees_a_changed_access():
    @cuda.jit
    def naive_unsigned(A, B, C):
        col = uint64(cuda.threadIdx.x)
        row = uint64(cuda.threadIdx.y)
        C[col, row] = A[row, col]
    assert statements(naive_unsigned) != statements(kernels.naive)


# --- what numba makes of the indices --------------------------------------------------------------

# Compiles each kernel's LLVM IR for sm_90 in a process on the real CUDA target (no GPU is needed for
# numba's part, before NVVM) and counts numba's negative-index checks: `icmp slt i64 %i, 0`.
_IR_SCRIPT = """
import re, sys
from numba import types
from numba.cuda.compiler import compile_cuda
from tiledlab.core import fair, kernels
arr = types.Array(types.float32, 2, "C")
for name in sys.argv[1:]:
    f = getattr(fair, name, None) or getattr(kernels, name)
    ir = compile_cuda(f.py_func, types.void, (arr, arr, arr), cc=(9, 0)).library.get_llvm_str()
    print(name, len(re.findall(r"icmp slt i64 %[^,]+, 0\\n", ir)))
"""


def wraparound_checks(*names):
    env = {**os.environ, "TILEDLAB_BACKEND": "gpu", "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    run = subprocess.run([sys.executable, "-c", _IR_SCRIPT, *names], capture_output=True, text=True, env=env,
                         timeout=300)
    if run.returncode and ("NvvmSupportError" in run.stderr or "DynamicLibNotFound" in run.stderr):
        pytest.skip("numba's CUDA target needs CUDA's libraries (NVVM) to compile: " + run.stderr[-200:])
    if run.returncode and "has no attribute 'row_stack'" in run.stderr:
        pytest.skip("numba-cuda 0.30's CUDA target needs numpy < 2.5 (the cuda extras pin it); only its simulator runs on 2.5")
    assert run.returncode == 0, run.stderr
    return {name: int(n) for name, n in (line.split() for line in run.stdout.split("\n") if line)}


def test_numba_emits_no_wraparound_code_for_the_unsigned_kernels():
    found = wraparound_checks("naive", "naive_unsigned", "tiled", "tiled_unsigned")
    assert found["naive"] == 6  # A[row, k], B[k, col], C[row, col]: two signed indices each
    assert found["tiled"] > 0
    assert found["naive_unsigned"] == found["tiled_unsigned"] == 0


# --- both loops' SASS -----------------------------------------------------------------------------

# The shape of a naive kernel's loop (cuobjdump text): a signed index's fix-up is the compare (ISETP)
# and select (SEL) before each load.
NAIVE_SASS = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_2:
        /*0010*/                   ISETP.GE.AND P1, PT, R4, RZ, PT ;
        /*0020*/                   SEL R6, R4, R5, P1 ;
        /*0030*/                   LDG.E R8, desc[UR4][R6.64] ;
        /*0040*/                   LDG.E R9, desc[UR4][R10.64] ;
        /*0050*/                   FFMA R0, R8, R9, R0 ;
        /*0060*/                   IADD3 R4, R4, 0x1, RZ ;
        /*0070*/              @P0  BRA `(.L_x_2) ;
        /*0080*/                   STG.E desc[UR4][R2.64], R0 ;
        /*0090*/                   EXIT ;
"""


def test_loop_listing_gives_the_main_loop_as_written():
    from tools.measure import sass
    listing = sass.loop_listing(NAIVE_SASS)
    assert listing[0] == "ISETP.GE.AND P1, PT, R4, RZ, PT" and listing[-1] == "@P0  BRA `(.L_x_2)"
    assert len(listing) == sass.summary(NAIVE_SASS)["loop_total"] == 7
    assert sass.loop_listing("        /*0000*/                   EXIT ;") == []  # no loop, no listing


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="checks the simulator's refusal")
def test_reading_sass_refuses_on_the_simulator(tmp_path, capsys):
    from tiledlab.experiments import Unavailable
    from tools import cli
    from tools.measure import sass
    with pytest.raises(Unavailable, match="needs a real GPU"):
        sass.of("naive_unsigned")
    assert cli.main(["sass", "--tile", "4", "--out", str(tmp_path)]) == 3
    assert "needs a real GPU" in capsys.readouterr().err  # refused before anything is compiled
    assert not (tmp_path / "sass.csv").exists()


def test_sass_jobs_are_every_kernel_of_the_sweep_once():
    from tools.measure import sass
    assert sass.sweep_jobs([8, 32], fair=True) == [("naive", 16), ("tiled", 8), ("tiled", 32),
                                                   ("naive_unsigned", 16), ("tiled_unsigned", 8),
                                                   ("tiled_unsigned", 32)]
