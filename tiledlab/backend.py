"""Choose the CUDA backend (real GPU or numba's CUDA simulator) before numba.cuda is first imported."""
import ctypes
import ctypes.util
import os
import sys

ENV = "TILEDLAB_BACKEND"  # "gpu" or "simulator" forces a backend


def _driver_has_device():
    """True when a CUDA driver loads and reports at least one device (no numba involved)."""
    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
    for name in filter(None, names):
        try:
            driver = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    return False


def _wanted():
    forced = os.environ.get(ENV, "").strip().lower()
    if forced in ("gpu", "cuda"):
        return "gpu"
    if forced in ("sim", "simulator", "cudasim"):
        return "simulator"
    if forced:
        raise ValueError(f"{ENV}={forced!r}: use 'gpu' or 'simulator'")
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "simulator"
    return "gpu" if _driver_has_device() else "simulator"


def select():
    """Set numba up for the chosen backend; return 'gpu' or 'simulator'."""
    if "numba.cuda" in sys.modules:  # too late to choose: use what numba already uses
        import numba
        backend = "simulator" if numba.config.ENABLE_CUDASIM else "gpu"
    else:
        backend = _wanted()
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if backend == "simulator" else "0"
        if "numba" in sys.modules:
            import numba
            numba.config.ENABLE_CUDASIM = backend == "simulator"
        # Occupancy hints are about GPU tuning, not this lesson; keep them out of notebook outputs.
        os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    if backend == "simulator":
        from .simulator import accept_alignment, speed_up
        speed_up()
        accept_alignment()
    return backend


BACKEND = select()
SIMULATOR = BACKEND == "simulator"


def describe():
    """A dict naming the backend, the device and the versions that produced a result."""
    import numba
    import numpy
    from importlib.metadata import PackageNotFoundError, version
    from numba import cuda
    try:
        numba_cuda = version("numba-cuda")
    except PackageNotFoundError:
        numba_cuda = "not installed (numba's built-in CUDA target)"
    info = {"backend": BACKEND, "device": "CUDA simulator", "compute_capability": "",
            "numba": numba.__version__, "numba_cuda": numba_cuda, "numpy": numpy.__version__}
    if not SIMULATOR:
        dev = cuda.get_current_device()  # numba-cuda's: its name is a str
        info.update(device=dev.name, compute_capability="%d.%d" % dev.compute_capability)
    return info
