"""NVIDIA compute-sanitizer's race report on the tiled kernel with both barriers and with each removed."""
import re
import shutil
import sys

from tiledlab.experiments import Unavailable

from .profile import run_alone

TARGET = """
from numba import cuda
from tiledlab.core.launch import prepare
from tiledlab.core.kernels import tiled
from tiledlab.core.operands import operands
from tiledlab.counting.variants import without_barrier
prepare({kernel}, *operands({n}, {n}, {n}), {T})()
cuda.synchronize()
"""
KERNELS = (("tiled (both barriers)", "tiled"), ("without first barrier", "without_barrier(tiled, 0)"),
           ("without second barrier", "without_barrier(tiled, 1)"))


def run(n=64, T=16):
    """compute-sanitizer --tool racecheck on the correct and the two broken tiled kernels."""
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        raise Unavailable("compute-sanitizer is not on PATH")
    rows = []
    for name, expr in KERNELS:
        code = TARGET.format(kernel=expr, n=n, T=T)
        out = run_alone([tool, "--tool", "racecheck", sys.executable, "-c", code], timeout=300)
        text = out.stdout + out.stderr
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
        rows.append({"kernel": name, "N": n, "tile": T,
                     "hazards": int(m.group(1)) if m else 0, "errors": int(m.group(2)) if m else 0,
                     "warnings": int(m.group(3)) if m else 0,
                     "summary": m.group(0) if m else (text.strip().splitlines() or ["no output"])[-1]})
    return rows
