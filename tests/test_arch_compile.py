"""Every registry kernel assembles for sm_75, sm_80, sm_86, sm_89 and sm_90 where the card rule allows it, and
ptxas refuses it where the rule does (tests/arch_compile.py): compiled without a GPU, by numba-cuda with NVVM
and ptxas from the nvcc wheel, which the `test` extra installs."""
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import arch_compile  # noqa: E402

needs_wheel = pytest.mark.skipif(arch_compile.nvcc_dir() is None, reason="the nvcc wheel (nvidia-cuda-nvcc-cu12, in "
                                 "the `test` extra) is not installed: nothing to compile for the cards with")


@needs_wheel
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
