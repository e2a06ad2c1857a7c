"""Every registry kernel compiled for the students' cards, without a GPU: numba-cuda's compiler, with NVVM and
ptxas from NVIDIA's nvcc wheel on PyPI (nvidia-cuda-nvcc-cu12), for sm_75, sm_80, sm_86, sm_89 and sm_90.

For each kernel and architecture the card rule (Kernel.refusal, for the card modelled for that architecture)
says whether it runs there, and ptxas must agree: assemble what the rule allows (with registers × threads
within the card's registers per block), fail on what it refuses. A kernel's results are recorded in
tests/data/arch_compile.json under the SHA-256 of its source, launch bounds and compiler versions;
`python tests/arch_compile.py --check` compiles again only what is not recorded (a new or changed kernel)
and the `ALWAYS` kernels (so that every run compiles, and shows the record reproduces), and checks all.
`--update` writes what it compiled into the record as well (a new or changed kernel), `--record` compiles
everything and writes the record; both write the registers per thread into
tiledlab/data/compiled/registers.csv, where core.best reads them for its model of a card; `--table` prints
kernel × architecture. Dynamic shared memory is sized at
launch: ptxas cannot know a card's opt-in limit, so a kernel the rule refuses for that alone must assemble.
"""
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, distribution, version

RECORD = pathlib.Path(__file__).parent / "data" / "arch_compile.json"
REGISTERS = pathlib.Path(__file__).parents[1] / "tiledlab" / "data" / "compiled" / "registers.csv"
ARCHS = {"sm_75": "t4", "sm_80": "a100", "sm_86": "rtx3090", "sm_89": "rtx4090", "sm_90": "h200"}
ALWAYS = ("tiled", "a_64x128x8_8x8_s3")  # a hand-written kernel and a cp.async one: compiled on every check


def nvcc_dir():
    """The nvcc wheel's folder (bin/ptxas, nvvm/lib64/libnvvm.so), or None when it is not installed."""
    try:
        return pathlib.Path(distribution("nvidia-cuda-nvcc-cu12").locate_file("nvidia/cuda_nvcc"))
    except PackageNotFoundError:
        return None


def _setup():
    """numba set up to compile for a card it cannot see: numba-cuda 0.30.4 (its last release) asks the driver
    for two things that compiling PTX does not need, NVRTC's list of architectures and the current device."""
    os.environ.update(TILEDLAB_BACKEND="gpu", CUDA_HOME=str(nvcc_dir()), NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0")
    import types

    import numba
    from numba.cuda import cuda_paths, dispatcher
    cuda_paths._get_nvrtc_path = lambda: cuda_paths._env_path_tuple("<not needed>", None)
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=numba.config.FORCE_CUDA_CC)
    return numba


def key(kernel):
    bound = kernel.bind()
    text = f"{kernel.source()}\n{kernel.launch_bounds(bound)}\n{version('numba-cuda')} {version('nvidia-cuda-nvcc-cu12')}"
    return hashlib.sha256(text.encode()).hexdigest()


def lowered(py_func, argtypes, cc, launch_bounds=None):
    """numba's library of kernel `py_func`, typed and lowered for compute capability `cc` (after _setup)."""
    import numba
    from numba.cuda import compiler
    numba.config.FORCE_CUDA_CC = cc
    return compiler._compile_pyfunc_with_fixup(
        py_func, argtypes, device=False, cc=cc, abi="numba", launch_bounds=launch_bounds, debug=None,
        lineinfo=False, fastmath=False, opt=None, abi_info=None, forceinline=False, lto=False)[0]


def compile_kernel(name):
    """{arch: {"assembles", "registers", "ptxas"}} for registry kernel `name` at its default constants."""
    numba = _setup()
    from numba import types

    from tiledlab.core.registry import KERNELS
    kernel = KERNELS[name]
    bound = kernel.bind()
    bounds = kernel.launch_bounds(bound)
    built = kernel.code.compile(kernel.code.at(name, {c: bound[c] for c in kernel.constants}), bound, bounds)
    library = lowered(built.py_func, (types.float32[:, ::1],) * 3, (7, 5), bounds)  # then NVVM per architecture
    found = {}
    for arch in ARCHS:
        cc = (int(arch[3]), int(arch[4]))
        numba.config.FORCE_CUDA_CC = cc
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(library.get_asm_strs(cc=cc)[0])
        run = subprocess.run([str(nvcc_dir() / "bin" / "ptxas"), f"-arch={arch}", "-v", f.name, "-o", os.devnull],
                             capture_output=True, text=True)
        os.unlink(f.name)
        registers = re.search(r"Used (\d+) registers", run.stderr)
        error = next((line for line in run.stderr.splitlines() if "error" in line), "")
        found[arch] = {"assembles": run.returncode == 0, "registers": int(registers[1]) if registers else None,
                       "ptxas": re.sub(r"^.*?error\s*:\s*", "", error)[:200]}
    return name, found


def compile_all(names):
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(2, len(names) or 1)) as pool:
        return dict(pool.map(compile_kernel, names))


def problems(results, kernels, cards):
    """What disagrees: ptxas against the card rule, or registers beyond the card's."""
    from tiledlab.core.card import DYNAMIC_SHARED_BYTES
    found = []
    for name, by_arch in results.items():
        kernel = kernels[name]
        threads = kernel.needs().threads
        for arch, r in by_arch.items():
            card = cards[ARCHS[arch]]
            rule = kernel.refusal(dataclasses.replace(card, shared_per_block_optin_bytes=DYNAMIC_SHARED_BYTES))
            if (rule is None) != r["assembles"]:  # the rule, but for the launch's limit on dynamic shared memory
                found.append(f"{name} {arch}: the rule says {rule or 'it runs'}; ptxas {r['ptxas'] or 'assembles it'}")
            elif r["assembles"] and r["registers"] * threads > card.registers_per_block:
                found.append(f"{name} {arch}: {r['registers']} registers × {threads} threads > {card.registers_per_block}")
    return found


def table(results):
    rows = [f"| kernel | {' | '.join(ARCHS)} |", "|---|" + "---|" * len(ARCHS)]
    for name, by_arch in results.items():
        cells = [f"{r['registers']} regs" if r["assembles"] else "refused" for r in by_arch.values()]
        rows.append(f"| {name} | {' | '.join(cells)} |")
    return "\n".join(rows)


def registers_csv(results):
    """registers.csv's text: one row per kernel and architecture it assembles for, with the compilers' versions."""
    made_by = f"ptxas {version('nvidia-cuda-nvcc-cu12')} (nvidia-cuda-nvcc-cu12) and numba-cuda {version('numba-cuda')}"
    rows = [f"{name},{arch},{r['registers']},{made_by}" for name, by_arch in results.items()
            for arch, r in by_arch.items() if r["assembles"]]
    return "\n".join(["kernel,arch,registers,compiler", *rows]) + "\n"


def counting_build(constants, arch="sm_90"):
    """The counting build of a generated cp.async rung at `constants`, compiled for `arch` as a GPU compiles it:
    {"seconds": compiling, "overloads": {helper: how many numba compiled}, "calls": {helper: calls in the PTX},
    "assembles": ptxas's verdict}. Run it in a process of its own: it sets numba up for a card it cannot see."""
    import time
    from types import SimpleNamespace

    import numpy as np
    numba = _setup()
    from numba import types

    from tiledlab.core import card, unrolled
    from tiledlab.core.generated import generated
    from tiledlab.counting.rewrite import ASYNC_HELPERS, HELPERS, instrumented
    card.current = card.modelled
    bound = generated("t_counted", **constants, **unrolled.ASYNC).bind()
    start, counting = time.perf_counter(), instrumented(bound)
    kernel = getattr(counting.kernel, "kernel", counting.kernel)
    launch = SimpleNamespace(blockspergrid=(2, 2), threadsperblock=(*bound.threads, 1), shape=(34, 45, 70))
    argtypes = [types.float32[:, ::1]] * 3 + [types.Array(numba.from_dtype(np.dtype(dtype)), len(shape(launch, 16)),
                                                          "C") for _, dtype, shape, _ in counting.buffers.layout]
    cc = (int(arch[3]), int(arch[4]))
    ptx = lowered(kernel.py_func, tuple(argtypes), cc).get_asm_strs(cc=cc)[0]
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    run = subprocess.run([str(nvcc_dir() / "bin" / "ptxas"), f"-arch={arch}", f.name, "-o", os.devnull],
                         capture_output=True, text=True)
    os.unlink(f.name)
    helpers = {h.__name__: kernel.py_func.__globals__[h.__name__] for h in HELPERS + ASYNC_HELPERS}
    calls = {name: len(re.findall(rf"call[^;]*\b\w*{name}\w*", ptx)) for name in helpers}
    return {"seconds": time.perf_counter() - start, "overloads": {n: len(h.overloads) for n, h in helpers.items()},
            "calls": calls, "assembles": run.returncode == 0}


def main(argv):
    _setup()
    from tiledlab.core import card
    from tiledlab.core.registry import KERNELS
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    keys = {name: key(k) for name, k in KERNELS.items()}
    if "--record" in argv:
        fresh = compile_all(list(KERNELS))
    else:
        fresh = compile_all([n for n in KERNELS if n in ALWAYS or record.get(n, {}).get("key") != keys[n]])
    results = {n: fresh[n] if n in fresh else record[n]["archs"] for n in KERNELS}
    found = problems(results, KERNELS, card.KNOWN)
    found += [f"{n}: compiled again, {fresh[n]} differs from the record {record[n]['archs']}" for n in ALWAYS
              if n in fresh and record.get(n, {}).get("key") == keys[n] and record[n]["archs"] != fresh[n]]
    if "--record" in argv or "--update" in argv:
        RECORD.write_text(json.dumps({n: {"key": keys[n], "archs": results[n]} for n in KERNELS}, indent=1) + "\n")
        REGISTERS.write_text(registers_csv(results))
    if "--table" in argv:
        print(table(results))
    print(f"compiled now: {', '.join(fresh) or 'none'}; from the record: {len(results) - len(fresh)}")
    print("\n".join(found) or "every kernel assembles where its rule allows it and is refused where it does not")
    return 1 if found else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--counting"]:  # the constants as JSON
        print(json.dumps(counting_build(json.loads(sys.argv[2]))))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
