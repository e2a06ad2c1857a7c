"""What the compiler made of a kernel: its SASS (the GPU's own instructions), counted in the main loop.

`sass_text(overload)` asks numba for a compiled kernel's SASS (`inspect_sass()`, which needs CUDA's
nvdisasm) and falls back to cuobjdump on its cubin. `main_loop(sass)` finds the innermost loop (a
backward branch) holding the most FFMA, which for the fully unrolled kernels is the loop over tile
steps, and counts its instructions by kind: FFMA, shared loads by width (LDS.32/.64/.128), shared
stores, global loads, barriers, local-memory traffic (LDL/STL: spilled registers). Plain text work;
`loop_listing(sass)` gives the main loop's instructions themselves (to show two kernels' loops side by
side). `of(kernel)` and `table(jobs)` compile kernels of the registry and read their SASS: GPU only.
"""
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+((?:@!?U?P\w+\s+)?[A-Z][A-Z0-9_.]*[^;]*);")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_TARGET = re.compile(r"BRA(?:\.[A-Z.]+)?\s+(?:(0x[0-9a-f]+)|`\((\.L_x_\d+)\))")
MEMORY = ("LDS", "STS", "LDG", "STG", "LDL", "STL", "LD", "ST", "LDSM")
COLUMNS = {  # CSV column → instruction kinds counted in the main loop
    "loop_ffma": ("FFMA",), "loop_lds32": ("LDS.32",), "loop_lds64": ("LDS.64",), "loop_lds128": ("LDS.128",),
    "loop_sts": ("STS.32", "STS.64", "STS.128"), "loop_ldg": ("LDG.32", "LDG.64", "LDG.128"), "loop_bar": ("BAR",),
    "loop_ldl": ("LDL.32", "LDL.64", "LDL.128"), "loop_stl": ("STL.32", "STL.64", "STL.128"),
    "loop_ldgsts": ("LDGSTS",), "loop_total": ("total",),
}


def instructions(sass):
    """([(address, opcode, text)], {label: address}) of a kernel's SASS (cuobjdump or nvdisasm text)."""
    found, labels, pending = [], {}, []
    for line in sass.splitlines():
        label = _LABEL.match(line)
        if label:
            pending.append(label.group(1))
            continue
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        address, text = int(m.group(1), 16), m.group(2).strip()
        labels.update({name: address for name in pending})
        pending = []
        found.append((address, re.sub(r"^@!?U?P\w+\s+", "", text).split()[0], text))  # without its predicate
    return found, labels


def kind(opcode):
    """'LDS.128', 'FFMA', 'BAR': memory instructions with their width (32 when none is written)."""
    base, *modifiers = opcode.split(".")
    if base in MEMORY:
        return f"{base}.{next((m for m in modifiers if m in ('64', '128', 'U8', 'S8', 'U16', 'S16')), '32')}"
    return base


def count(found, lo=None, hi=None):
    c = collections.Counter()
    for address, opcode, _ in found:
        if (lo is None or address >= lo) and (hi is None or address <= hi):
            c[kind(opcode)] += 1
            c["total"] += 1
    return c


def loops(found, labels):
    """(first, last) address of every backward branch's loop."""
    spans = []
    for address, opcode, text in found:
        m = _TARGET.search(text) if opcode.startswith("BRA") else None
        if m:
            target = int(m.group(1), 16) if m.group(1) else labels.get(m.group(2))
            if target is not None and target <= address:
                spans.append((target, address))
    return spans


def main_span(found, labels):
    """(first, last) address of the main loop: the innermost loop with the most FFMA; None without loops."""
    spans = loops(found, labels)

    def rank(span):
        lo, hi = span
        inner = not any(lo <= a and b <= hi and (a, b) != span and count(found, a, b)["FFMA"] for a, b in spans)
        ffma = count(found, lo, hi)["FFMA"]
        return (ffma > 0 and inner, ffma, lo - hi)

    return max(spans, key=rank, default=None)


def main_loop(sass):
    """Counter of the main loop's instructions (the innermost loop with the most FFMA), and of all."""
    found, labels = instructions(sass)
    best = main_span(found, labels)
    return (count(found, *best) if best else collections.Counter()), count(found)


def loop_listing(sass):
    """The main loop's instructions as written, predicates included ("@P0 BRA `(.L_x_1)"), in order."""
    found, labels = instructions(sass)
    best = main_span(found, labels)
    return [text for address, _, text in found if best and best[0] <= address <= best[1]]


def summary(sass):
    """One CSV row's worth: the main loop's counts (COLUMNS), its FFMA share, local-memory
    instructions anywhere in the kernel."""
    loop, whole = main_loop(sass)
    row = {column: sum(loop.get(k, 0) for k in kinds) for column, kinds in COLUMNS.items()}
    row["loop_ffma_share"] = round(row["loop_ffma"] / max(row["loop_total"], 1), 3)
    row["kernel_local_insts"] = sum(v for k, v in whole.items() if k.startswith(("LDL", "STL")))
    return row


def find_tool(name):
    """A CUDA binary tool on PATH, in /usr/local/cuda*, or in the NVIDIA wheels of this Python."""
    found = shutil.which(name)
    patterns = [f"/usr/local/cuda*/bin/{name}", f"{sys.prefix}/lib/python3*/site-packages/nvidia/*/bin/{name}",
                f"{sys.prefix}/lib/python3*/site-packages/nvidia/cu*/bin/{name}"]
    return found or next((hits[-1] for p in patterns if (hits := sorted(glob.glob(p)))), None)


def sass_text(overload):
    """(SASS text or None, how it was obtained) of a compiled kernel (a numba dispatcher's overload)."""
    try:
        return overload.inspect_sass(), "inspect_sass"
    except Exception as e:  # noqa: BLE001  nvdisasm missing, most often
        why = f"inspect_sass: {e!r}"[:120]
    tool = find_tool("cuobjdump")
    if tool is None:
        return None, f"{why}; no cuobjdump either"
    try:
        cubin = overload._codelibrary.get_cubin()  # private, hence the guard
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(bytes(getattr(cubin, "code", cubin)))
        out = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, timeout=120).stdout
        os.unlink(f.name)
        return out, "cuobjdump"
    except Exception as e:  # noqa: BLE001
        return None, f"{why}; cuobjdump: {e!r}"[:200]


# --- compiled kernels of the registry (GPU only) ----------------------------------------------------

SASS_FIELDS = ["kernel", "regs", "local_bytes", "shared_bytes", "sass_source", *COLUMNS, "loop_ffma_share",
               "kernel_local_insts"]  # the columns of sass.csv


def kernel_facts(kernel, sass=True):
    """Registers and local memory per thread, shared memory per block, and main-loop SASS counts of a
    compiled (launched) numba kernel; empty on the simulator, which compiles nothing."""
    overloads = getattr(kernel, "overloads", None)
    if not overloads:
        return {}
    overload = next(iter(overloads.values()))
    facts = {"regs": overload.regs_per_thread, "local_bytes": overload.local_mem_per_thread,
             "shared_bytes": overload.shared_mem_per_block}
    if sass:
        text, facts["sass_source"] = sass_text(overload)
        if text:
            facts.update(summary(text))
    return facts



SHAPE = (64, 64, 64)  # every kernel is compiled by one launch on this product before its SASS is read


def compiled(kernel, tile=None, **constants):
    """The compiled numba kernel of `kernel` (a registry name) at `tile` or `constants`, launched once."""
    from tiledlab.core.launch import prepare
    from tiledlab.core.operands import operands
    from tiledlab.experiments import require_gpu
    require_gpu("reading SASS")
    A, B = operands(*SHAPE, seed=1)
    launch = prepare(kernel, A, B, tile, **constants)()
    launch.result()  # waits for the launch, and the compilation before it
    return launch.kernel


def of(kernel, tile=None, **constants):
    """(SASS text or None, how it was obtained) of `kernel` at `tile` or `constants`."""
    return sass_text(next(iter(compiled(kernel, tile, **constants).overloads.values())))


def sweep_jobs(tiles, kernels=(), fair=False):
    """(kernel, tile) of every kernel a bench sweep times (experiments.bench.jobs), once each: what `table` reads."""
    from tiledlab.experiments import bench
    return [(k, t) for k, _, t in bench.jobs([0], tiles, kernels, fair=fair)]


def table(jobs):
    """One row per (kernel, tile) of `jobs` (tile None or "": the kernel's own constants): registers,
    local and shared memory, and the main loop's counts (the columns of the ladder's sass.csv)."""
    rows = []
    for kernel, tile in jobs:
        facts = kernel_facts(compiled(kernel, tile or None))
        rows.append({"kernel": kernel, "tile": tile, **{f: facts.get(f, "") for f in SASS_FIELDS[1:]}})
    return rows
