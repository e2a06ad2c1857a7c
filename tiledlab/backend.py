"""Choose the CUDA backend (a GPU or numba's CUDA simulator) before numba.cuda is first imported; and link kernels on
this host (`host_linking`): a driver older than the NVVM of numba-cuda's wheels refuses its PTX (Colab's T4: driver
550, PTX ISA 8.4; NVVM 12.9 writes 8.8) but loads a cubin linked by an nvJitLink as new as that NVVM (CUDA's minor
version compatibility), which Colab's install gets by `link_on_host()`."""
import ctypes
import ctypes.util
import os
import sys

ENV = "TILEDLAB_BACKEND"  # "gpu" or "simulator" forces a backend
FORCED = {"gpu": "gpu", "cuda": "gpu", "sim": "simulator", "simulator": "simulator", "cudasim": "simulator"}
# (NVVM's wheel, the nvJitLink wheel that must be as new): numba-cuda's cu12 extra, then its cu13 one
LINKING = (("nvidia-cuda-nvcc-cu12", "nvidia-nvjitlink-cu12"), ("nvidia-nvvm", "nvidia-nvjitlink"))


def _driver_has_device():
    """True when a CUDA driver loads and reports at least one device (no numba involved)."""
    libraries = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
    for name in filter(None, ["nvcuda.dll"] if sys.platform == "win32" else libraries):
        try:
            driver = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    return False


def select():
    """Set numba up for the chosen backend; return 'gpu' or 'simulator'."""
    if "numba.cuda" in sys.modules:  # too late to choose: use what numba already uses
        import numba
        backend = "simulator" if numba.config.ENABLE_CUDASIM else "gpu"
    else:
        forced = os.environ.get(ENV, "").strip().lower()
        if forced and forced not in FORCED:
            raise ValueError(f"{ENV}={forced!r}: use 'gpu' or 'simulator'")
        backend = FORCED.get(forced) or ("simulator" if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
                                         or not _driver_has_device() else "gpu")  # forced: the driver is never asked
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if backend == "simulator" else "0"
        if "numba" in sys.modules:
            import numba
            numba.config.ENABLE_CUDASIM = backend == "simulator"
        os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")  # GPU tuning hints: not in notebook outputs
    if backend == "simulator":
        from .simulator import accept_alignment, fresh_locals, speed_up
        speed_up()
        accept_alignment()
        fresh_locals()
    return backend


def _release(dist):
    """(major, minor) of an installed distribution, None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return tuple(int(x) for x in version(dist).split(".")[:2])
    except PackageNotFoundError:
        return None


def host_linking():
    """(pip requirement that makes kernels link on this host, "" if they do; a line saying what is installed)."""
    for nvvm, link in LINKING:
        wrote, linker = _release(nvvm), _release(link)
        if wrote:
            wanted = "" if linker and linker >= wrote else f"{link}>={wrote[0]}.{wrote[1]}"
            found = f"NVVM {'%d.%d' % wrote} ({nvvm}) and " + (f"nvJitLink {'%d.%d' % linker} ({link})" if linker
                                                                else f"no nvJitLink ({link})")
            return wanted, found + (": kernels are linked on this host" if not wanted else ": the driver would "
                                    "compile the PTX" if not linker else ": nvJitLink cannot read NVVM's PTX")
    return "", "no NVVM wheel: numba-cuda uses the CUDA toolkit installed on the system"


def link_on_host():
    """Colab's install step: install the nvJitLink that `host_linking` asks for, if any, and say how kernels link."""
    import subprocess
    wanted = host_linking()[0]
    if wanted:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", wanted], check=True)
    print(host_linking()[1] + (f" (installed {wanted})" if wanted else ""))


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
    info = {"backend": BACKEND, "device": "CUDA simulator", "compute_capability": "", "numba": numba.__version__,
            "numba_cuda": numba_cuda, "numpy": numpy.__version__}
    if not SIMULATOR:
        dev = cuda.get_current_device()  # numba-cuda's: its name is a str
        info.update(device=dev.name, compute_capability="%d.%d" % dev.compute_capability)
    return info
