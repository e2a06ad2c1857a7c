"""cuBLAS's SGEMM through CuPy, in FP32 (CUPY_TF32=0): the yardstick every kernel is timed against. Without CuPy
or on the simulator, `import_cupy()` and `sgemm()` are None and `cupy_version()` is ""."""
import os

from ..backend import SIMULATOR


def import_cupy():
    """CuPy, or None where it is absent, cannot reach a GPU, or the simulator runs."""
    if SIMULATOR:
        return None
    os.environ["CUPY_TF32"] = "0"  # FP32 FFMA, as the lesson's kernels compute: no TF32 tensor cores
    try:
        import cupy
        return cupy
    except Exception:  # absent, or present without a usable GPU
        return None


def cupy_version():
    """CuPy's version, for the provenance of rows timed against it; "" without CuPy."""
    cupy = import_cupy()
    return cupy.__version__ if cupy else ""


class SGEMM:
    """C = A @ B by cuBLAS, A and B copied to the device once: call it to launch, `result()` for C."""

    def __init__(self, cupy, A, B):
        self.A, self.B = cupy.asarray(A), cupy.asarray(B)
        self.C = cupy.full((A.shape[0], B.shape[1]), cupy.nan, dtype=cupy.float32)  # unwritten stays NaN
        self.matmul = cupy.matmul

    def __call__(self):
        self.matmul(self.A, self.B, out=self.C)

    def result(self):
        return self.C.get()


def sgemm(A, B):
    """A launchable cuBLAS SGEMM of A and B (float32), or None without CuPy."""
    cupy = import_cupy()
    return SGEMM(cupy, A, B) if cupy else None


def timed_sgemm(A, B, timer):
    """(timing, C): cuBLAS's product of A and B timed by `timer(launch) -> Timing`; None without CuPy."""
    launch = sgemm(A, B)
    return None if launch is None else (timer(launch), launch.result())
