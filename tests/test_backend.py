import subprocess
import sys

import pytest

import tiledlab


def backend_with(env, code="import tiledlab; print(tiledlab.BACKEND)"):
    import os
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "NUMBA_ENABLE_CUDASIM": "", **env})
    return run


def test_forcing_the_simulator():
    run = backend_with({"TILEDLAB_BACKEND": "simulator"}, "import tiledlab, numba; "
                       "print(tiledlab.BACKEND, bool(numba.config.ENABLE_CUDASIM))")  # numba set up for it too
    assert run.returncode == 0 and run.stdout.strip() == "simulator True"


def test_unknown_backend_name_is_refused():
    run = backend_with({"TILEDLAB_BACKEND": "tpu"})
    assert run.returncode != 0 and "use 'gpu' or 'simulator'" in run.stderr


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="this machine has a GPU, so the default is not the simulator")
def test_without_a_driver_the_default_is_the_simulator():
    assert backend_with({"TILEDLAB_BACKEND": ""}).stdout.strip() == "simulator"


def test_numba_cuda_imported_first_is_respected():
    code = "from numba import cuda; import tiledlab; print(tiledlab.BACKEND)"
    run = backend_with({"NUMBA_ENABLE_CUDASIM": "1", "TILEDLAB_BACKEND": ""}, code)
    assert run.stdout.strip() == "simulator"


def test_describe_names_the_versions():
    info = tiledlab.describe()
    assert info["backend"] == tiledlab.BACKEND and info["numba"] and info["numpy"]
    assert (info["device"] == "CUDA simulator") == tiledlab.SIMULATOR
