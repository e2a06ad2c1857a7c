"""Every registry kernel assembles for sm_75, sm_80, sm_86, sm_89 and sm_90 where the card rule allows it, and
ptxas refuses it where the rule does (tests/arch_compile.py): compiled without a GPU, by numba-cuda with NVVM
and ptxas from the nvcc wheel, which the `test` extra installs."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import arch_compile  # noqa: E402

needs_wheel = pytest.mark.skipif(arch_compile.nvcc_dir() is None, reason="the nvcc wheel (nvidia-cuda-nvcc-cu12, in "
                                 "the `test` extra) is not installed: nothing to compile for the cards with")


needs_old_numpy = pytest.mark.skipif(
    tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 5),
    reason="numba-cuda 0.30 compiles for a GPU only on numpy < 2.5 (it overloads np.row_stack, which 2.5 removed); "
           "the simulator run on the newest numpy has nothing to compile with")


@needs_wheel
@needs_old_numpy
def test_every_kernel_assembles_where_its_rule_allows_and_only_there():
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "TILEDLAB_CARD")}
    run = subprocess.run([sys.executable, str(HERE / "arch_compile.py"), "--check"], capture_output=True, text=True,
                         env=env, timeout=540)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert "compiled now: " + ", ".join(arch_compile.ALWAYS) in run.stdout, run.stdout  # the record covers the rest


def test_the_rule_and_the_record_disagree_where_they_should():
    from tiledlab.core import card
    from tiledlab.core.registry import KERNELS
    one = {"a_64x128x8_8x8_s3": {arch: {"assembles": True, "registers": 64, "ptxas": ""} for arch in arch_compile.ARCHS}}
    found = arch_compile.problems(one, KERNELS, card.KNOWN)
    assert found == ["a_64x128x8_8x8_s3 sm_75: the rule says a_64x128x8_8x8_s3: Tesla T4 (sm_75, 40 SMs) cannot run "
                     "it: cp.async needs compute capability 8.0 or higher; ptxas assembles it"]
    one["a_64x128x8_8x8_s3"]["sm_75"] = {"assembles": False, "registers": None, "ptxas": "Feature 'cp.async'"}
    one["a_64x128x8_8x8_s3"]["sm_90"]["registers"] = 600  # 600 × 128 threads > 65,536
    assert arch_compile.problems(one, KERNELS, card.KNOWN) == ["a_64x128x8_8x8_s3 sm_90: 600 registers × 128 "
                                                                "threads > 65536"]


@needs_wheel
@needs_old_numpy
def test_the_counting_helpers_compile_once_and_stay_out_of_line():
    """A generated rung's counting build calls the counting helpers at each of its hundreds of accesses, with line
    numbers and indices as constants. Compiled once per constant and inlined at every call, one such build took 78 s
    here and minutes on an H100's host (a GPU test of a rung never finished); once per kind of argument and called,
    7 s."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "TILEDLAB_CARD")}
    constants = '{"BM": 32, "BN": 64, "BK": 8, "TM": 4, "TN": 8, "stages": 3}'
    run = subprocess.run([sys.executable, str(HERE / "arch_compile.py"), "--counting", constants],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    built = json.loads(run.stdout.splitlines()[-1])
    assert built["assembles"]
    assert max(built["overloads"].values()) <= 4, built["overloads"]  # 1,002 compiles in all before
    assert built["calls"]["_tl_sload"] > 0 and built["calls"]["_tl_sstore"] > 0, built["calls"]  # not inlined


def test_dynamic_tiles_beyond_a_card_s_opt_in_are_refused_by_the_rule_though_ptxas_assembles_them():
    """The RTX 30/40 cards give a block 99 KiB by opt-in: a kernel of 138 KiB of dynamic tiles is refused there by
    its rule; ptxas cannot know (the size is given at launch), so the record's assembling it is no disagreement."""
    from tiledlab.core import card, unrolled
    from tiledlab.core.generated import generated
    from tiledlab.core.registry import KERNELS
    kernel = generated("t_138k", BM=128, BN=128, BK=32, TM=8, TN=8, stages=4, **unrolled.ASYNC)
    needs = kernel.needs()
    assert needs.shared.dynamic and 99 * 1024 < needs.shared.bytes <= 163 * 1024
    refused = {arch: kernel.refusal(card.KNOWN[name]) for arch, name in arch_compile.ARCHS.items()}
    assert {arch for arch, why in refused.items() if why} == {"sm_75", "sm_86", "sm_89"}
    assert "cp.async" in refused["sm_75"] and "dynamic shared memory" in refused["sm_86"] + refused["sm_89"]
    record = {"t_138k": {arch: {"assembles": arch != "sm_75", "registers": 128, "ptxas": "" if arch != "sm_75" else
                                "Feature 'cp.async'"} for arch in arch_compile.ARCHS}}
    assert arch_compile.problems(record, {"t_138k": kernel}, card.KNOWN) == []
    for name in ("d_64x128x16_8x8_s5", "d_128x256x16_8x16_s3_w16x2"):  # the registry's fit 99 KiB: sm_80 and up
        assert {arch for arch, n in arch_compile.ARCHS.items() if KERNELS[name].refusal(card.KNOWN[n])} == {"sm_75"}
