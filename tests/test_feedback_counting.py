"""The counting lab's student-facing calls given wrong arguments: check()'s one line (nothing launched, the kernel not
blamed for an argument), hazard_message, address_stream / hit_rate and without_barrier's short errors, and no numpy
warning from a student's kernel reaching stderr. On the simulator (tests/conftest.py)."""
import warnings

import numpy as np
import pytest
from numba import cuda, float32

import tiledlab
from tiledlab.core import Rule, launch_geometry
from tiledlab.core.operands import operands
from tiledlab.counting import exercises
from tiledlab.counting.cachesim import address_stream, hit_rate
from tiledlab.counting.count import count_loads
from tiledlab.counting.exercises import check
from tiledlab.counting.hazards import hazard_message
from tiledlab.counting.variants import without_barrier

T = 4


@launch_geometry(threads=lambda T: (T // 2, T), requires=[Rule(lambda T: T % 2 == 0, "two columns per thread")], T=4)
@cuda.jit
def two_per_thread(A, B, C):
    col = 2 * (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0]


@cuda.jit
def divides_by_zero(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0] / 0


@pytest.fixture
def launches(monkeypatch):
    """The launches check() made (each refused)."""
    made = []

    def refuse(*args, **kwargs):
        made.append(args)
        raise AssertionError("launched")
    monkeypatch.setattr(exercises, "count_loads", refuse)
    monkeypatch.setattr(exercises, "matmul", refuse)
    return made


def budget(M, K, N, T):
    return 10 ** 6


TAKES_A_FUNCTION = "max_loads takes a function of (M, K, N, T) that returns how many are allowed"


@pytest.mark.parametrize("args, kwargs, says", [
    ((4, "KERNEL"), {}, "check() takes your @cuda.jit kernel first, as in check(my_kernel, tile=4)"),
    ((4,), {}, "check() takes your @cuda.jit kernel first"),
    (("tiled",), {"tile": 0}, "tile must be a whole number from 1 to 32, got 0"),
    (("KERNEL",), {"tile": True}, "tile must be a whole number from 1 to 32, got True"),
    (("KERNEL",), {"tile": None}, "tile must be a whole number from 1 to 32, got None"),
    (("KERNEL",), {"tile": 64}, "tile=64 gives 64×64 = 4096 threads per block"),
    ((two_per_thread,), {"tile": 3}, "check(..., tile=3): two_per_thread: two columns per thread; T=3 breaks it"),
    (("KERNEL",), {"max_loads": 5000}, f"{TAKES_A_FUNCTION}, a number ≥ 0: max_loads=budget, not budget(16, 16, 16, "
                                       "4); got 5000"),
    (("KERNEL",), {"max_loads": 0}, "got 0"),
    (("KERNEL",), {"max_loads": budget(16, 16, 16, 4)}, "got 1000000"),
    (("KERNEL",), {"max_loads": "budget"}, "got 'budget'"),
    (("KERNEL",), {"max_loads": lambda M, K, N: 10 ** 6}, "max_loads(16, 16, 16, 4) raised TypeError: "),
    (("KERNEL",), {"max_loads": lambda M, K, N, T: 1 // 0}, "raised ZeroDivisionError: integer division"),
    (("KERNEL",), {"max_loads": lambda M, K, N, T: None}, "max_loads(16, 16, 16, 4) returned None"),
    (("KERNEL",), {"max_loads": lambda M, K, N, T: "100"}, "returned '100'"),
    (("KERNEL",), {"max_loads": lambda M, K, N, T: -1}, "returned -1"),
    (("KERNEL",), {"max_loads": lambda M, K, N, T: float("nan")}, "returned nan"),
    (("KERNEL",), {"max_shared_reads": 500}, "max_shared_reads takes a function of (M, K, N, T)"),
    (("KERNEL",), {"max_shared_reads": lambda M, K, N, T: None}, "max_shared_reads(16, 16, 16, 4) returned None"),
    *((("KERNEL",), {"max_shared_reads_per_fma": f},
       f"max_shared_reads_per_fma must be a number of at least 0, got {f!r}") for f in ("2", -1)),
    *((("KERNEL",), {"barriers_per_step": b}, f"barriers_per_step must be a whole number of at least 1, got {b!r}")
      for b in ("1", 0, -1, 1.5)),
    *((("KERNEL",), {"shapes": s}, f"shapes takes a list of (M, K, N), three whole numbers of at least 1 each, as in "
                                   f"shapes=[(5, 23, 7)], got {s!r}")
      for s in ([(4, 4)], (4, 4, 4), [(-1, 4, 4)], [(4.5, 4, 4)], [(0, 4, 4)], 7)),
    *((("KERNEL",), {"seed": s}, f"seed must be a whole number of at least 0, got {s!r}") for s in ("x", -1, 1.5)),
    *((("KERNEL",), {"hint": h}, f"hint takes a str, what to try when the loads exceed the limit, got {h!r}")
      for h in (None, 123)),
    *((("KERNEL",), {"from_global": f}, f'from_global takes the operands read straight from global memory, as in '
                                        f'from_global="B", got {f!r}') for f in ("b", "C", ["B"])),
])
def test_a_wrong_argument_is_one_line_and_nothing_runs(args, kwargs, says, launches, capsys):
    args = tuple(tiledlab.tiled if a == "KERNEL" else a for a in args)
    assert check(*args, **kwargs) is False
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and says in out[0] and "cannot count this kernel" not in out[0], out
    assert not launches


def test_a_limit_function_still_limits_and_a_kernels_refusal_still_blames_the_kernel(capsys):
    assert check(tiledlab.tiled, tile=4, max_loads=budget, max_shared_reads=lambda M, K, N, T: 0) is False
    assert "shared reads is more than the 0 this exercise allows" in capsys.readouterr().out
    assert check(None) is False
    assert capsys.readouterr().out.startswith("tiledlab cannot count this kernel: 'NoneType' is not a kernel")


def test_a_students_division_by_zero_warns_nothing():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert check(divides_by_zero, tile=4, limit_loads=False) is False
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def hazardous():
    A, B = operands(8, 8, 8, np.random.default_rng(0))
    return count_loads(without_barrier(tiledlab.tiled, 0), A, B, tile=4)


def test_hazard_message_takes_the_count_or_its_hazards(hazardous):
    assert "barrier hazards" in hazard_message(hazardous) == hazard_message(hazardous.hazards)
    for wrong, name in ((None, "NoneType"), ([1], "list")):
        with pytest.raises(TypeError, match=rf"hazard_message\(count.hazards\), got {name}$"):
            hazard_message(wrong)


def test_address_stream_and_hit_rate_say_what_they_take(hazardous):
    with pytest.raises(ValueError, match=r"count_loads\(\.\.\., trace=True\)"):
        address_stream(hazardous)
    assert hit_rate([1, 2, 1], 4) == hit_rate(np.array([1, 2, 1]), 4) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="at least one cache line"):
        hit_rate(np.array([], dtype=int), 4)
    for capacity in (0, -1, 1.5, "4"):
        with pytest.raises(ValueError, match=f"capacity_lines must be a whole number of at least 1, got {capacity!r}"):
            hit_rate([1, 2, 1], capacity)


@pytest.mark.parametrize("which, says", [
    (5, r"which=5: tiled has 2 cuda.syncthreads\(\) calls, not 6; which counts them from 0: give 0 to 1$"),
    *((w, f"which must be a whole number of at least 0, got {w!r}") for w in (-1, "0", 1.5, True)),
])
def test_without_barrier_numbers_from_zero(which, says):
    with pytest.raises(ValueError, match=says):
        without_barrier(tiledlab.tiled, which)


def test_the_chinese_edition_says_it_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    assert check(tiledlab.tiled, tile=4, max_loads=lambda M, K, N, T: None) is False
    assert capsys.readouterr().out.strip() == ("max_loads 接受一个以 (M, K, N, T) 为参数、返回允许次数（不小于 0 的数）"
                                               "的函数：写 max_loads=budget，而不是 budget(16, 16, 16, 4)；"
                                               "max_loads(16, 16, 16, 4) 返回了 None")
    with pytest.raises(ValueError, match="which=5：tiled 里有 2 个 cuda.syncthreads"):
        without_barrier(tiledlab.tiled, 5)


def test_a_pass_says_how_many_shapes_it_ran_and_lists_each_counted_one(capsys):
    """Every shape the check ran, counted or not, is in "Correct on N shapes"; a load line follows for each counted."""
    from tiledlab.core.registry import KERNELS
    assert exercises.check(KERNELS["tiled"], tile=4, seed=0)
    out = capsys.readouterr().out
    counted = exercises.count_shapes(KERNELS["tiled"], 4)
    ran = len(exercises.SHAPES) + 2 + len(counted)  # the fixed shapes, two drawn, the counted ones
    assert f"Correct on {ran} shapes. Global loads of A and B, at the {len(counted)} counted:" in out, out
    assert len([line for line in out.splitlines() if "(naive needs" in line]) == len(counted), out


@cuda.jit
def reads_b_transposed(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[col % B.shape[0], k % B.shape[1]]
        C[row, col] = acc


def test_a_wrong_result_shows_yours_above_numpys_column_for_column(capsys):
    assert not exercises.check(reads_b_transposed, tile=4, limit_loads=False, seed=0)
    out = capsys.readouterr().out.splitlines()
    yours = next(line for line in out if line.startswith("Yours:"))
    spec = next(line for line in out if line.startswith("numpy:"))
    assert yours.index("[") == spec.index("["), out
