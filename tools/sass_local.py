"""Registers, spills and main-loop SASS of registry kernels, without a GPU (a maintainer's tool).

numba-cuda's `compile_ptx` writes the PTX (NVVM from the `nvidia-cuda-nvcc-cu12` wheel), `ptxas` from the same
wheel assembles it for the card (`-arch sm_90`), `nvdisasm` (wheel `nvidia-cuda-nvdisasm`) prints the SASS,
and tools.measure.sass counts its main loop as on the GPU. On an H200 these matched `inspect_sass()`.

    TILEDLAB_BACKEND=gpu python tools/sass_local.py a_128x64x32_8x8_s4 w_128x256x8_8x16_warp16x2 [--arch sm_90]

A name may also be `name:BM=64,BK=32,stages=4,...`: a generated kernel with those options (see unrolled.OPTIONS).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the clone: tools.measure

os.environ.setdefault("TILEDLAB_BACKEND", "gpu")  # compile for a GPU even here, where there is none


def tool(name):
    hits = sorted(glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/*/bin/{name}"))
    if not hits:
        raise SystemExit(f"{name} not found: pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm")
    return hits[-1]


def kernel_of(spec):
    """A registry kernel by name, or `name:KEY=V,...` a generated one with those constants and options."""
    from tiledlab.core.generated import generated
    from tiledlab.core.registry import KERNELS
    from tiledlab.core.unrolled import ASYNC, HYBRID  # noqa: F401  (for eval)
    if ":" not in spec:
        return KERNELS[spec]
    name, given = spec.split(":", 1)
    return generated(name, **eval(f"dict({given})"))  # a maintainer's tool: BM=64,warp=(4,8),**ASYNC


def ptx_of(kernel, arch):
    from numba import cuda, float32

    from tiledlab.core import build
    bound = kernel.bind()
    code = kernel.checked_code(bound)
    scope = build.with_helpers(dict(kernel.namespace), code.helpers)
    exec(compile(code.text, build.remember(code.text, f"<{kernel.name}>"), "exec"), scope)
    from numba.cuda import dispatcher
    cc = tuple(int(c) for c in arch[3:])
    dispatcher.get_current_device = lambda: type("Card", (), {"compute_capability": cc})()  # helpers' cc, no GPU
    array = float32[:, ::1]
    bounds = kernel.launch_bounds(bound)
    ptx, _ = cuda.compile_ptx(scope[kernel.name], (array, array, array), cc=cc, launch_bounds=bounds)
    return ptx


def sass_facts(ptx, arch):
    from tools.measure.sass import summary
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        open(src, "w").write(ptx)
        info = subprocess.run([tool("ptxas"), "-arch", arch, "-v", src, "-o", cubin], capture_output=True,
                              text=True, check=True).stderr
        sass = subprocess.run([tool("nvdisasm"), "-c", cubin], capture_output=True, text=True, check=True).stdout
    regs = int(re.search(r"Used (\d+) registers", info).group(1))
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", info)
    shared = re.search(r"(\d+) bytes smem", info)
    return {"regs": regs, "spill_st": int(spill.group(1)), "spill_ld": int(spill.group(2)),
            "static_smem": int(shared.group(1)) if shared else 0, **summary(sass)}


COLUMNS = ("regs", "spill_st", "static_smem", "loop_ffma", "loop_lds128", "loop_lds32", "loop_ldgsts", "loop_ldg",
           "loop_sts", "loop_bar", "loop_total")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernels", nargs="+")
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    print("kernel".ljust(40), *(c.ljust(8) for c in COLUMNS), "shared (bytes, dynamic)")
    for spec in args.kernels:
        kernel = kernel_of(spec)
        try:
            facts = sass_facts(ptx_of(kernel, args.arch), args.arch)
        except subprocess.CalledProcessError as e:
            print(spec.ljust(40), "ptxas:", e.stderr.strip().splitlines()[-1])
            continue
        print(kernel.name.ljust(40), *(str(facts[c]).ljust(8) for c in COLUMNS), tuple(kernel.shared_memory(kernel.bind())))


if __name__ == "__main__":
    main()
