"""Exercise checks: right answer on awkward shapes, and the global loads that the exercise asks for."""
import numpy as np

from ..core.formulas import predicted
from ..core.launch import matmul
from .count import count_loads

SHAPES = [(5, 23, 7), (8, 8, 8), (13, 9, 17), (1, 4, 1)]
COUNT_SHAPE = (16, 16, 16)


def check(kernel, tile=4, tiling=True, max_loads=None, shapes=SHAPES):
    """Run a student's @cuda.jit(A, B, C) kernel: compare with numpy on odd shapes, then count its loads.

    With tiling=True the kernel must also load no more than the tiled formula, and its shared memory
    must be free of barrier hazards, so a naive kernel, or one missing a cuda.syncthreads(), fails.
    `max_loads(M, K, N, T)` sets another limit on loads, for exercises that tile only one operand.
    Returns True when everything holds; prints what went wrong otherwise.
    """
    rng = np.random.default_rng(7)
    for M, K, N in shapes:
        A, B = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
        with np.errstate(all="ignore"):
            C = matmul(A, B, kernel, tile)
        spec = A @ B
        if not np.allclose(C, spec, rtol=1e-4, atol=1e-4):
            print(f"Wrong result for A {M}×{K} · B {K}×{N} with tile={tile}. Top-left corner:")
            print("Yours:", np.array2string(C[:3, :3], precision=3))
            print("Spec :", np.array2string(spec[:3, :3], precision=3))
            return False
    M, K, N = COUNT_SHAPE
    A, B = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    with np.errstate(all="ignore"):
        counted = count_loads(kernel, A, B, tile)
    naive, tiled = (sum(predicted(k, M, K, N, tile).values()) for k in ("naive", "tiled"))
    limit = max_loads(M, K, N, tile) if max_loads else tiled
    print(f"Correct on {len(shapes)} shapes. Global loads at {M}×{K}·{K}×{N}, tile={tile}: "
          f"{counted.total:,} (naive needs {naive:,}, tiled {tiled:,}).")
    if tiling and counted.total > limit:
        print(f"Right answer, but {counted.total:,} loads is more than the {limit:,} this exercise allows: "
              "stage tiles in cuda.shared.array and reuse them from there.")
        return False
    if tiling and any(counted.hazards.values()):
        print(f"Right answer this time, but shared memory has barrier hazards {counted.hazards}: "
              "a cuda.syncthreads() is missing, and on a GPU the result would change from run to run.")
        return False
    print("Passed.")
    return True
