"""A device function the kernel calls sees the constants the lab builds the kernel at (hostile review 51, S1).

check(tile=8) and count_loads(..., tile=8) bound T = 8 into the kernel only: a @cuda.jit(device=True) helper that
read T kept its module's T (4 here), so the lab counted and checked another kernel than the one at the tile asked
(2,880 loads for a kernel that makes 2,400; a right kernel refused), and the simulator (which reads the global at
each call) and a GPU (which freezes it when the helper first compiles) differed. Now every helper the kernel calls,
directly, through another helper or through a module, is built again with the constants bound, in the counting
build, the plain run and a GPU's build alike."""
import json
import os
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest
from conftest import operands
from numba import cuda, float32

import tiledlab
from tiledlab.core import formulas
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check

T = 4  # the module's T: the lab builds the kernels below at tile=8 (or 2), helpers included
SCALE = 1.0  # a global a helper reads that is no constant: changed, it makes a new build


@cuda.jit(device=True)
def kidx(t, i):  # the k index of element i of tile step t
    return t * T + i


@cuda.jit(device=True)
def steps(K):  # the tile steps of K
    return (K + T - 1) // T


@cuda.jit(device=True)
def a_index(t, i):  # reads no constant itself: it calls kidx, which does
    return kidx(t, i)


helpers = types.ModuleType("helpers")  # device functions called as helpers.a_index(...)
helpers.a_index = a_index


@cuda.jit
def tiled_with_helpers(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range(steps(K)):
        ka = helpers.a_index(t, tx)
        kb = kidx(t, ty)
        sA[ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
        sB[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
        cuda.syncthreads()  # the step's tiles are stored
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # and read, before the next step stores over them
    if row < M and col < N:
        C[row, col] = acc


@pytest.mark.parametrize("tile", [2, 8])
def test_a_helper_reading_t_is_counted_at_the_tile_asked(rng, tile):
    M, K, N = 20, 20, 20
    A, B = operands(rng, M, K, N)
    c = count_loads(tiled_with_helpers, A, B, tile)
    assert c.total == sum(formulas.tiled_loads(M, K, N, tile).values())  # 2,880 at tile=8 before, for 2,400
    assert c.barriers == 2 * -(-K // tile)  # the helper's step count: 8 barriers at tile=8 before, for 6
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(tiledlab.matmul(A, B, tiled_with_helpers, tile=tile), A @ B, rtol=1e-4, atol=1e-4)


def test_a_right_kernel_with_helpers_passes_at_another_tile(capsys):
    assert check(tiled_with_helpers, tile=8, seed=0)  # "Wrong result ... right for the first 1 tile steps" before
    assert "Passed." in capsys.readouterr().out


@cuda.jit(device=True)
def tile_width():
    return float32(T)


@cuda.jit("float32(float32)", device=True)
def times_t(x):  # declared with a signature: its copy compiles that one only
    return x * T * SCALE


@cuda.jit
def stores_tile_widths(A, B, C):
    row, col = cuda.grid(2)
    if row == 0 and col == 0:
        C[0, 0] = tile_width()
        C[0, 1] = times_t(float32(3.0))
        C[0, 2] = float32(helpers.a_index(3, 1))  # through a module and a helper that reads no constant itself


def test_helpers_see_the_constants_and_a_changed_global_makes_a_new_build(rng):
    global SCALE
    A, B = operands(rng, 2, 2, 3)
    assert count_loads(stores_tile_widths, A, B, 8).C[0].tolist() == [8.0, 24.0, 25.0]
    SCALE = 2.0
    try:  # the helper's own globals are part of the build's key: not the build of SCALE = 1
        assert tiledlab.matmul(A, B, stores_tile_widths, tile=8)[0].tolist() == [8.0, 48.0, 25.0]
    finally:
        SCALE = 1.0


GPU_BUILD = """
import json, re, struct, sys
from types import SimpleNamespace
sys.path.insert(0, sys.argv[1])
import arch_compile
numba = arch_compile._setup()
numba.config.FORCE_CUDA_CC = (9, 0)
import numpy as np
from numba import types
from tiledlab.core import card
card.current = card.modelled
import test_helper_constants as here
from tiledlab.core.kernel import Kernel
from tiledlab.counting.rewrite import instrumented
kernel = Kernel.of(here.stores_tile_widths)
plain, counting = kernel.build(tile=8), instrumented(kernel.bind(tile=8))
launch = SimpleNamespace(blockspergrid=(1, 1), threadsperblock=(8, 8, 1), shape=(2, 2, 3))
buffers = [types.Array(numba.from_dtype(np.dtype(dtype)), len(shape(launch, 16)), "C")
           for _, dtype, shape, _ in counting.buffers.layout]
stored = []
for built, argtypes in ((plain, []), (counting.kernel, buffers)):
    args = (types.float32[:, ::1],) * 3 + tuple(argtypes)
    ptx = arch_compile.lowered(built.py_func, args, (9, 0)).get_asm_strs(cc=(9, 0))[0]
    words = [int(n) for n in re.findall(r"mov.[bu]32\\s+%r\\d+, (\\d+);", ptx)]
    found = {struct.unpack("<f", struct.pack("<I", n))[0] for n in words}
    found |= {struct.unpack(">f", bytes.fromhex(h))[0] for h in re.findall(r"0f([0-9A-Fa-f]{8})", ptx)}
    stored.append(sorted(found & {4.0, 8.0, 12.0, 13.0, 24.0, 25.0}))
print(json.dumps(stored))
"""


def test_a_gpu_build_binds_the_constants_into_its_helpers_too():
    """The plain and the counting build, compiled for sm_90 by numba-cuda's compiler without a GPU
    (tests/arch_compile.py): the values stored are 8, 24 and 25, the helpers' at T = 8 (4, 12 and 13 before, the
    module's T)."""
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    import arch_compile
    if arch_compile.nvcc_dir() is None or tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 5):
        pytest.skip("no nvcc wheel, or numpy >= 2.5: nothing to compile for a GPU with (tests/test_arch_compile.py)")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "TILEDLAB_CARD")}
    here = pathlib.Path(__file__).parent
    run = subprocess.run([sys.executable, "-c", GPU_BUILD, str(here)], capture_output=True, text=True, env=env,
                         cwd=here.parent, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.splitlines()[-1]) == [[8.0, 24.0, 25.0]] * 2  # the plain and the counting build
