"""The kernel object and its one build path: what a Kernel holds, constants bound once, one cache,
nothing set on numba's objects, and kernels that cannot be built again refused with a reason."""
import numpy as np
import pytest
from numba import cuda, float32

import tiledlab
from tiledlab.core import Kernel, Rule, launch_geometry, registry
from tiledlab.core.launch import specialize
from tiledlab.counting import count_loads

A = np.ones((8, 8), np.float32)
B = np.ones((8, 8), np.float32)


def test_a_registry_kernel_holds_its_constants_rules_geometry_and_idea():
    k = registry.KERNELS["regtile_2d"]
    assert isinstance(k, Kernel) and k.name == "regtile_2d" and k.idea
    bound = k.bind(BM=64, TM=4)
    assert bound["NTHREADS"] == (64 // 4) * (128 // 8) and bound["TX"] == 128 // 8  # derived, from the rules
    assert k.sizes(bound) == ((64, 128), (16, 16))
    assert all(isinstance(r, Rule) for r in k.rules)


def test_constants_are_bound_once_per_launch(monkeypatch):
    calls = []
    bind = Kernel.bind
    monkeypatch.setattr(Kernel, "bind", lambda self, *a, **k: calls.append(self.name) or bind(self, *a, **k))
    tiledlab.matmul(A, B, "regtile_2d", BM=16, BN=32, BK=8, TM=4, TN=4)
    assert calls == ["regtile_2d"]


def test_one_build_cache_for_names_kernels_and_functions():
    assert specialize("tiled", 8) is specialize(tiledlab.tiled, T=8) is specialize(registry.KERNELS["tiled"], 8)
    assert specialize("tiled", 8) is not specialize("tiled", 4)


def test_nothing_is_set_on_numbas_objects():
    count_loads("tiled", A, B, 4)
    for build in (specialize("tiled", 4), specialize("gen_prefetch", BM=32, BN=64, BK=8, TM=4, TN=8),
                  specialize("regtile_vec")):
        assert not [name for name in vars(build) if name.startswith("tiledlab")]



def test_a_check_compiles_a_students_kernel_once_to_run_and_once_to_count(monkeypatch):
    """One check() builds a student's kernel twice, whatever the shapes it runs and counts (issue 40): the build
    that runs at its tile, and the counting build."""
    from tiledlab.core import build
    from tiledlab.counting.exercises import check

    @cuda.jit
    def mine(A, B, C):  # a student's naive kernel, new to every cache of builds
        row = cuda.blockIdx.y * T + cuda.threadIdx.y  # noqa: F821
        col = cuda.blockIdx.x * T + cuda.threadIdx.x  # noqa: F821
        if row < C.shape[0] and col < C.shape[1]:
            acc = float32(0.0)
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc

    compiled, jit = [], build.jit
    monkeypatch.setattr(build, "jit", lambda fn, bounds=None: compiled.append(fn.__name__) or jit(fn, bounds))
    assert check(mine, tile=4, limit_loads=False, seed=0)
    assert compiled == ["mine", "mine"]

def test_a_device_function_is_refused_as_a_kernel():
    @cuda.jit(device=True)
    def helper(A, B, C):
        C[0, 0] = A[0, 0]

    with pytest.raises(ValueError, match="device function"):
        tiledlab.matmul(A, B, helper)


def _closing_over_T():
    T = 4

    @cuda.jit
    def closes(A, B, C):
        sA = cuda.shared.array((T, T), float32)  # noqa: F841
        row = cuda.blockIdx.y * T + cuda.threadIdx.y
        col = cuda.blockIdx.x * T + cuda.threadIdx.x
        if row < C.shape[0] and col < C.shape[1]:
            acc = float32(0.0)
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc
    return closes


def test_a_kernel_closing_over_a_constant_is_refused_not_run_wrong():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 8), dtype=np.float32), rng.standard_normal((8, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="uses T from the function it was defined in"):
        tiledlab.matmul(a, b, _closing_over_T(), tile=2)


def test_a_kernel_typed_at_the_prompt_is_refused_clearly():
    scope = {"cuda": cuda, "float32": float32}
    exec(compile("@cuda.jit\ndef typed(A, B, C):\n    C[0, 0] = A[0, 0]\n", "<stdin>", "exec"), scope)
    with pytest.raises(ValueError, match="typed at the Python prompt"):
        tiledlab.matmul(A, B, scope["typed"])


@cuda.jit
def two_on_one_line(A, B, C):
    sA, sB = cuda.shared.array((T, T), float32), cuda.shared.array((T, T), float32)  # noqa: F821
    C[0, 0] = sA[0, 0] + sB[0, 0]


@pytest.mark.parametrize("run", [tiledlab.matmul, count_loads], ids=["matmul", "count_loads"])
def test_the_contract_is_checked_on_every_path(run):
    with pytest.raises(ValueError, match="declarations on one line"):
        run(A, B, two_on_one_line, tile=4) if run is tiledlab.matmul else run(two_on_one_line, A, B, 4)


@pytest.mark.parametrize("bounds", ["abc", 5, (None, None), (1024, -1), (0, 1), (True, 1), (1024,)])
def test_bad_launch_bounds_are_refused(bounds):
    with pytest.raises(ValueError, match="launch_bounds must be"):
        tiledlab.matmul(A, B, "regtile_2d", launch_bounds=bounds, BM=16, BN=32, BK=8, TM=4, TN=4)


def test_launch_bounds_below_the_block_are_refused():
    with pytest.raises(ValueError, match="more than the launch bounds"):
        tiledlab.matmul(A, B, "regtile_2d", launch_bounds=(16, 1), BM=16, BN=32, BK=8, TM=4, TN=4)


@pytest.mark.parametrize("name", ["gen_prefetch", "regtile_2d", "regtile_1d"])
@pytest.mark.parametrize("constant", ["BK", "TM", "BM"])
def test_a_zero_constant_is_a_value_error_not_a_crash(name, constant):
    with pytest.raises(ValueError):
        tiledlab.matmul(A, B, name, **{constant: 0})


def test_a_declared_kernel_is_a_kernel_and_launches_like_one():
    @launch_geometry(T=4, T2=lambda T: 2 * T, requires=[Rule(lambda T: T % 2 == 0, "T is even")])
    @cuda.jit
    def doubled(A, B, C):
        row = cuda.blockIdx.y * T + cuda.threadIdx.y  # noqa: F821
        col = cuda.blockIdx.x * T + cuda.threadIdx.x  # noqa: F821
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = float32(T2)  # noqa: F821

    assert isinstance(doubled, Kernel) and doubled.bind(T=8)["T2"] == 16
    np.testing.assert_array_equal(tiledlab.matmul(A, B, doubled), np.full((8, 8), 8, np.float32))
    with pytest.raises(ValueError, match="T is even; T=3 breaks it"):
        tiledlab.matmul(A, B, doubled, tile=3)


def test_rules_must_be_rule_objects():
    with pytest.raises(ValueError, match="Rule objects"):
        launch_geometry(requires={"T % 2 == 0": "even"})


def test_a_rule_or_derived_constant_that_divides_by_zero_is_a_value_error():
    from tiledlab.core.rules import apply
    with pytest.raises(ValueError, match=r"demo: T=4 divides by zero"):
        apply(lambda T: 8 // (T - 4), {"T": 4}, "demo")
    with pytest.raises(ValueError, match=r"demo: 8 is a multiple of T - 4; T=4 breaks it"):
        Rule(lambda T: 8 % (T - 4) == 0, "8 is a multiple of T - 4").enforce({"T": 4}, "demo")

    @launch_geometry(T=4, STEPS=lambda T: 16 // (T - 4))
    @cuda.jit
    def divided(A, B, C):
        C[0, 0] = A[0, 0]

    with pytest.raises(ValueError, match="divides by zero"):
        tiledlab.matmul(A, B, divided)


@pytest.mark.parametrize("value, whole", [(3, True), (np.int64(3), True), (np.uint32(3), True), (True, False),
                                          (np.bool_(True), False), (3.0, False), (np.array(2.5), False),
                                          (np.array(3), False), (np.array([1, 2]), False)])
def test_a_whole_number_is_an_int_or_numpy_integer_never_an_array_or_a_bool(value, whole):
    """One test for every size, index and constant (rules.is_whole): an array has __index__ but is no number."""
    from tiledlab.core.rules import is_whole
    assert is_whole(value) is whole


def test_a_specialized_build_refuses_other_constants_saying_it_was_specialized():
    built = specialize(registry.KERNELS["regtile_2d"], BM=64, BN=64, TM=4, TN=4)
    with pytest.raises(ValueError, match="was specialized for BM=64, [^;]*; it cannot take BM=128 as well: give one"):
        Kernel.of(built).bind(BM=128)
    assert Kernel.of(built).bind(BM=64)["BM"] == 64
