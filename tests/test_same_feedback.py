"""On a GPU, check() says what the simulator says (issue 36): every kernel of the hazard, shape and survivor tests
and every exercise's key, checked here and in a child Python on the simulator, gives the same verdict, the same
kind of feedback and the same lines. Counts of hazards and the threads of an example depend on the order the threads
ran in, so numbers other than line numbers are not compared. On the simulator there is nothing to compare."""
import contextlib
import importlib
import io
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from unittest import mock

import pytest

import tiledlab

# (module, kernel, check's options): modules of tests/ and solutions/, importable in the child too
CASES = [
    *[("test_hazards", name, {"limit_loads": False}) for name in (
        "barrier_inside_the_guard", "returns_before_the_barrier", "a_barrier_in_each_branch", "two_columns_unguarded",
        "stores_past_the_edge", "reads_row_minus_one", "shared_index_past_the_tile", "float_index_at_run_time")],
    *[("test_every_shape", name, {}) for name in (
        "leftover_from_global", "clamped_rows", "barriers_in_the_row_guard", "first_block_loads_the_panel")],
    *[("test_every_shape", name, {"limit_loads": False}) for name in (
        "drops_the_partial_step", "swapped_store", "stores_each_step")],
    ("test_every_shape", "reads_the_wrong_half", {"barriers_per_step": 1}),
    ("test_survivors", "wide_past_the_edge", {"limit_loads": False}),
    *[("solutions.kernels", exercise, None) for exercise in ("1.1", "2.1", "3.1", "3.3", "4.3", "5.1", "6.1")],
]
KINDS = ("Passed.", "is reached by thread", "barrier hazards", "is stored by two threads", "outside",
         "no thread of the block had stored", "an index is not a whole number", "Right answer, but", "Wrong result",
         "cuda.syncthreads() in", "stored", "tile step", "reach the wrong place", "sent apart by line")


def feedback(module, name, options):
    """What check() prints for the kernel `name` of `module` (an exercise's key when options is None)."""
    from tiledlab.counting.exercises import check
    found = importlib.import_module(module)
    kernel, options = found.EXERCISES[name] if options is None else (getattr(found, name), options)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        check(kernel, tile=4, seed=0, **options)
    return said.getvalue()


def gist(said):
    """The verdict, the kinds of feedback and the lines a check's words name: of a barrier hazard's example, whose
    two threads the order they ran in picks (a store of sA or of sB), the later line only, the read."""
    lines = sorted(set(re.findall(r"line (\d+)", said)), key=int)
    return ("Passed." in said, [kind for kind in KINDS if kind in said],
            lines[-1:] if "barrier hazards" in said else lines)


@pytest.mark.skipif(tiledlab.SIMULATOR, reason="compares a GPU's feedback with the simulator's")
@pytest.mark.parametrize("module,name,options", CASES, ids=[f"{m}.{n}" for m, n, _ in CASES])
def test_the_gpu_says_what_the_simulator_says(module, name, options):
    here = feedback(module, name, options)
    child = {"NUMBA_ENABLE_CUDASIM": "1", "TILEDLAB_BACKEND": "simulator"}
    with mock.patch.dict(os.environ, child), \
            ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as simulator:
        there = simulator.submit(feedback, module, name, options).result()
    assert "Traceback" not in here and "\x1b[" not in here, here
    assert gist(here) == gist(there), (here, there)
