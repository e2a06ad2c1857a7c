"""What is known about a kernel is found once, on its Build: its shared declarations (contract.shared_declarations)
are read by the stepper's check, the card's check, the count's rewrite and its scan from one scan of the code.
The generator's rules and the launch bounds' messages are marked for the catalog; a limit a rule quotes is filled in
after translation."""
import dataclasses
import sys

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from numba import cuda, float32  # noqa: E402

import tiledlab  # noqa: E402,F401  first: it picks the simulator on a machine without a GPU
from tiledlab.core import contract, rules, unrolled  # noqa: E402
from tiledlab.core.card import DYNAMIC_SHARED_BYTES  # noqa: E402
from tiledlab.core.generated import generated  # noqa: E402
from tiledlab.core.kernel import Kernel  # noqa: E402
from tiledlab.core.registry import KERNELS  # noqa: E402
from tiledlab.notebook import stepper  # noqa: E402

W = 4  # a global a kernel's shared shape reads


@pytest.fixture
def scans(monkeypatch):
    """The name of the kernel of each scan for shared declarations, wherever the package calls it from."""
    found, original = [], contract.shared_declarations

    def counted(func, namespace):
        found.append(func.name)
        return original(func, namespace)
    for module in [m for name, m in sys.modules.items() if name.startswith("tiledlab")]:
        if getattr(module, "shared_declarations", None) is original:
            monkeypatch.setattr(module, "shared_declarations", counted)
    return found


def test_the_stepper_and_its_counted_launch_scan_a_build_for_shared_arrays_once(scans):
    kernel = dataclasses.replace(KERNELS["tiled"])  # a new Kernel: none of its builds has found anything yet
    assert stepper._tiled(kernel, 4) is kernel and scans == ["tiled"]  # the stepper's check reads the Build's fact
    traced, _naive = stepper.launches(8, 4, kernel=kernel)  # the card's check, the rewrite and its scan: no scan
    kernel.build(tile=4)
    assert traced.counted.shared_names == ("sA", "sB") and scans.count("tiled") == 1, scans


@cuda.jit
def padded(A, B, C):
    sA = cuda.shared.array((W, W), float32)
    sA[cuda.threadIdx.y, cuda.threadIdx.x] = A[cuda.threadIdx.y, cuda.threadIdx.x]
    cuda.syncthreads()  # sA is whole before it is read
    C[cuda.threadIdx.y, cuda.threadIdx.x] = sA[cuda.threadIdx.x, cuda.threadIdx.y] + B[0, 0]


def test_a_builds_shared_declarations_follow_the_globals_they_read(monkeypatch, scans):
    bound = Kernel.of(padded).bind(tile=4)
    assert [shape for _node, shape, *_ in bound.shared_declarations] == [(4, 4)]
    assert bound.shared_declarations is bound.shared_declarations and scans == ["padded"]  # found once
    monkeypatch.setitem(padded.py_func.__globals__, "W", 8)  # a notebook cell changed the global: found again
    assert [shape for _node, shape, *_ in bound.shared_declarations] == [(8, 8)] and scans == ["padded"] * 2


@cuda.jit
def odd_tile(A, B, C):
    sA = cuda.shared.array((T, T + 1), float32)  # noqa: F821  T: bound by the build
    C[0, 0] = sA[0, 0] + A[0, 0] + B[0, 0]


def test_shared_arrays_the_count_refuses_are_not_told_they_are_missing():
    with pytest.raises(ValueError, match=r"array shape \(T, T \+ 1\): numba compiling for a GPU needs every dimension"):
        stepper.launches(8, 4, kernel=odd_tile)


MARKED = ["launch_bounds must be (max threads per block, min blocks per SM), two whole numbers of at least 1, got "
          "{given!r}", "{kernel}: {threads} threads per block, more than the launch bounds {given} allow",
          "unknown options {unknown}; generate_source takes {options}"]


def test_the_generators_rules_and_the_launch_bounds_messages_are_marked_for_the_catalog():
    from tools import code_catalog
    marked = code_catalog.extract()
    assert [r.why for r in unrolled.RULES + unrolled.OPTION_RULES if r.why not in marked] == []
    assert [m for m in MARKED if m not in marked] == []


def test_a_limit_a_rule_quotes_is_filled_in_after_translation_in_english_as_before(monkeypatch):
    with pytest.raises(ValueError, match=r"^big: CUDA allows at most 1024 threads per block, \(BN/TN\)×\(BM/TM\); BM="):
        unrolled.generate_source(BM=256, BN=256, TM=4, TN=4, name="big")
    with pytest.raises(ValueError, match=rf"^big: a block's shared tiles fit the {DYNAMIC_SHARED_BYTES // 1024} KiB "):
        generated("big", BK=512, stages=2, transposed=False, prefetch=False)  # an option's rule keeps its quotes
    chinese = {"CUDA allows at most {most} threads per block, (BN/TN)×(BM/TM)": "CUDA 每个线程块最多允许 {most} 个线程"}
    monkeypatch.setattr(rules, "_", lambda message: chinese.get(message, message))
    with pytest.raises(ValueError, match="^big: CUDA 每个线程块最多允许 1024 个线程; BM=256"):
        unrolled.generate_source(BM=256, BN=256, TM=4, TN=4, name="big")
    with pytest.raises(ValueError, match=r"^braces: T in \{2, 4\}; T=3 breaks it$"):  # a why without quotes: as written
        rules.Rule(lambda T: T in (2, 4), "T in {2, 4}").enforce({"T": 3}, "braces")
