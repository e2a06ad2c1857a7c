"""`python -m tools profile`: hardware counters under Nsight Compute (`ncu`), where the time goes, at every level.

`run()` launches, in a child process under `ncu --csv`, the lesson's kernels (naive and tiled at each
N and T), the variants of `effects` at one N, the ladder of register tiling at one N (tiled T = 32,
every register-tiled rung, the search's best), cuBLAS (through CuPy), and the roof kernels of `peaks`
and two chases of `latency`, each once. It returns one tidy row per launch, labelled, with the
counters of METRICS and the figures `derived()` computes from them (per-FMA ratios, blocks per SM
and the occupancy limiter, stall shares, the time each resource alone would need).
Metrics this ncu and GPU do not know are dropped first (`ncu --query-metrics`); a name ncu still
rejects is dropped and the run repeated, so one wrong name costs a column, not the run. Names: the
Nsight Compute Kernel Profiling Guide (metrics structure, stall reasons) and the CLI guide's table.
"""
import csv
import io
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys

from tiledlab.experiments import Unavailable, require_gpu
from tiledlab.experiments.bench import NAIVE_TILE
from tiledlab.experiments.profile import STALLS

STALL_REASONS = tuple(STALLS)  # Nsight Compute's names: a column of profile.csv each
CLONE = pathlib.Path(__file__).resolve().parents[2]  # the child imports tools from the clone, as this process did

CUPY_OWN = "cupy_"  # CuPy's own kernels (a copy of an operand, say) launched beside cuBLAS's: not cuBLAS

# tidy column → Nsight Compute metric
METRICS = {
    # time and clock during the kernel (ncu runs with --clock-control none: the clock the timings saw)
    "time_ns": "gpu__time_duration.sum",
    "sm_clock_hz": "sm__cycles_elapsed.avg.per_second",
    "sm_cycles": "sm__cycles_elapsed.max",
    # instructions, issue slots, FMAs
    "inst_issued": "smsp__inst_issued.sum",
    "inst_executed": "smsp__inst_executed.sum",
    "issue_active_pct": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "ffma": "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    # global memory: instructions, L1, L2, DRAM
    "global_ld_inst": "smsp__inst_executed_op_global_ld.sum",
    "global_st_inst": "smsp__inst_executed_op_global_st.sum",
    "l1_ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1_ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1_hit_pct": "l1tex__t_sector_hit_rate.pct",
    "l1_ld_hit_pct": "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
    "l2_bytes": "lts__t_bytes.sum",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    # shared memory
    "shared_ld_inst": "smsp__inst_executed_op_shared_ld.sum",
    "shared_st_inst": "smsp__inst_executed_op_shared_st.sum",
    "shared_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "shared_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    # local memory: spilled registers (0 for a kernel whose registers suffice)
    "local_ld_inst": "smsp__inst_executed_op_local_ld.sum",
    "local_st_inst": "smsp__inst_executed_op_local_st.sum",
    "shared_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    # occupancy: achieved, theoretical, and what limits blocks per SM
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
    "eligible_warps_per_cycle": "smsp__warps_eligible.avg.per_cycle_active",
    "registers_per_thread": "launch__registers_per_thread",
    "shared_bytes_per_block": "launch__shared_mem_per_block_static",
    "dynamic_shared_bytes_per_block": "launch__shared_mem_per_block_dynamic",
    "block_limit_registers": "launch__occupancy_limit_registers",
    "block_limit_shared_mem": "launch__occupancy_limit_shared_mem",
    "block_limit_warps": "launch__occupancy_limit_warps",
    "block_limit_blocks": "launch__occupancy_limit_blocks",
    "waves_per_sm": "launch__waves_per_multiprocessor",
    # pipe utilization (% of peak over active cycles) and how well the accesses use what they move
    "pipe_lsu_pct": "smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "pipe_fma_pct": "smsp__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "pipe_alu_pct": "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "pipe_uniform_pct": "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
    "pipe_tensor_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",  # 0 for FFMA-only SGEMM
    "shared_pipe_pct": "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "shared_efficiency_pct": "smsp__sass_average_data_bytes_per_wavefront_mem_shared.pct",
    "global_ld_efficiency_pct": "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    # the profiler's own peaks (the metrics of its hierarchical roofline), to check the measured roofs
    "dram_pct_of_peak": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_pct_of_peak": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "ffma_peak_per_cycle": "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "dram_peak_bytes_per_cycle": "dram__bytes.sum.peak_sustained",
    "dram_clock_hz": "dram__cycles_elapsed.avg.per_second",
    "l2_peak_bytes_per_cycle": "lts__t_bytes.sum.peak_sustained",
    "l2_clock_hz": "lts__cycles_elapsed.avg.per_second",
    "shared_bytes": "sm__sass_data_bytes_mem_shared.sum",
    "shared_peak_bytes_per_cycle": "sm__sass_data_bytes_mem_shared.sum.peak_sustained",
    # warp states: % of active warp-cycles spent in each (they sum to ≈ 100 with "selected")
    **{f"stall_{r}_pct": f"smsp__warp_issue_stalled_{r}_per_warp_active.pct" for r in STALL_REASONS},
}


_listing = {}


def known(ncu, metrics):
    """(kept, dropped): metrics whose base name `ncu --query-metrics` lists; launch__* are kept (they
    are launch attributes, not hardware counters). An empty or failed listing drops nothing."""
    if ncu not in _listing:
        try:
            _listing[ncu] = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True,
                                           timeout=120).stdout
        except (OSError, subprocess.TimeoutExpired):
            _listing[ncu] = ""
    names = {line.split()[0] for line in _listing[ncu].splitlines() if line.strip()}
    if len(names) < 50:
        return list(metrics), []
    kept = [m for m in metrics if m.startswith("launch__") or m.split(".")[0] in names]
    return kept, [m for m in metrics if m not in kept]


def parse(text):
    """[(launch ID, kernel name, {metric: float})] from `ncu --csv --print-units base` output."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no CSV table in ncu's output")
    found, names = {}, {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        if not (row.get("ID") or "").isdigit():
            continue  # a ==PROF== or ==WARNING== line printed inside the table
        launch = int(row["ID"])
        names[launch] = row.get("Kernel Name", "")
        try:
            found.setdefault(launch, {})[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            found.setdefault(launch, {})  # n/a: a value ncu could not collect stays missing
    return [(i, names[i], found[i]) for i in sorted(found)]


def rejected(text, metrics):
    """Metrics named on an ncu error line (e.g. '==ERROR== Failed to find metric X')."""
    bad = set()
    for line in text.splitlines():
        if "error" not in line.lower():
            continue
        whole = {m for m in metrics if m in line}
        bad |= whole or {m for m in metrics if re.search(re.escape(m.split(".")[0]) + r"(?![\w])", line)}
    return bad


def run_alone(cmd, timeout):
    """subprocess.run in a session of its own: on timeout, or anything else that stops the wait (a test's time
    limit, Ctrl-C), the whole group (the tool and the process it watches) is killed, so no orphan keeps the GPU."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def counters(command, metrics=None, extra=(), timeout=300, attempts=4, log=print):
    """Run `command` under ncu; return ([(id, kernel name, {column: value})], metrics used, dropped)."""
    ncu = shutil.which("ncu")
    if ncu is None:
        raise Unavailable("ncu (Nsight Compute) is not on PATH; profile needs it")
    wanted = dict(METRICS if metrics is None else metrics)
    names, dropped = known(ncu, list(wanted.values()))
    for _ in range(attempts):
        cmd = [ncu, "--clock-control", "none", "--csv", "--print-units", "base", *extra,
               "--metrics", ",".join(names), *command]
        run = run_alone(cmd, timeout)
        text = run.stdout + "\n" + run.stderr
        bad = rejected(text, names) if run.returncode else set()
        if run.returncode == 0 or not bad:
            break
        log(f"ncu rejected {sorted(bad)}; dropping them and running again")
        dropped += sorted(bad)
        names = [m for m in names if m not in bad]
    if run.returncode:
        raise RuntimeError(f"ncu failed ({run.returncode}):\n{text[-3000:]}")
    column = {m: c for c, m in wanted.items()}
    rows = [(i, kernel, {column[m]: v for m, v in values.items() if m in column}) for i, kernel, values in parse(run.stdout)]
    return rows, names, dropped


def derived(r, sms):
    """Per-row figures from the counters: per warp-FMA ratios, blocks per SM and its limiter,
    stall fractions, and lower bounds on the time from each resource (ms)."""
    out = {}
    ffma, clock = r.get("ffma"), r.get("sm_clock_hz")
    if ffma:
        warp_fma = ffma / 32
        for c in ("inst_issued", "global_ld_inst", "shared_ld_inst", "shared_ld_wavefronts", "shared_ld_conflicts"):
            if r.get(c) not in (None, ""):
                out[f"{c}_per_warp_fma"] = r[c] / warp_fma
    limits = {k[len("block_limit_"):]: r[k] for k in r if k.startswith("block_limit_") and r[k] not in (None, "")}
    if limits:
        out["blocks_per_sm"] = min(limits.values())
        out["occupancy_limiter"] = "+".join(k for k, v in limits.items() if v == out["blocks_per_sm"])
    stalls = {k: r[k] for k in r if k.startswith("stall_") and r[k] not in (None, "")}
    total = sum(stalls.values())
    if total:
        top = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
        out["top_stalls"] = ", ".join(f"{k[6:-4]} {v / total:.0%}" for k, v in top)
    if clock:
        cycles = 1e3 / clock  # ms per cycle
        if r.get("inst_issued"):
            out["bound_issue_ms"] = r["inst_issued"] / (sms * 4) * cycles  # 4 schedulers, 1 inst/clk each
        wave = (r.get("shared_ld_wavefronts") or 0) + (r.get("shared_st_wavefronts") or 0)
        if wave:
            out["bound_shared_ms"] = wave / sms * cycles  # one wavefront per clock per SM
        if ffma:
            out["bound_fma_ms"] = ffma / (sms * 128) * cycles  # 128 FP32 lanes per SM (cc 9.0)
        if r.get("l1_ld_requests"):
            out["bound_lsu_ms"] = ((r.get("global_ld_inst") or 0) + (r.get("global_st_inst") or 0)
                                   + (r.get("shared_ld_inst") or 0) + (r.get("shared_st_inst") or 0)) / sms * cycles
    if r.get("time_ns"):
        out["time_ms"] = r["time_ns"] / 1e6
    if ffma:  # arithmetic intensity at each level of the layered roofline (FLOP = 2 per FFMA)
        for level, moved in (("dram", (r.get("dram_read_bytes") or 0) + (r.get("dram_write_bytes") or 0)),
                             ("l2", r.get("l2_bytes")), ("shared", r.get("shared_bytes")),
                             ("load_instruction", 4 * 32 * ((r.get("global_ld_inst") or 0) + (r.get("shared_ld_inst") or 0)))):
            if moved:
                out[f"flop_per_{level}_byte"] = 2 * ffma / moved
    return out


def launches(ns, tiles, effects_n=None, ladder_n=None, fair=False, kernels=(), kernels_n=()):
    """(label, N, tile) of the matmul launches, in launch order: naive and tiled at each N (with `fair`,
    the fair pair after them, as in bench), then the variants of `effects` at `effects_n`, then the
    ladder at `ladder_n` (tile 0: a kernel by name of tiledlab.core.registry at its own constants), then
    `kernels` (names of the registry) at each N of `kernels_n`."""
    from tiledlab.core.registry import LADDER, LADDER_TOP
    from tiledlab.experiments.bench import swept
    from .effects import variants
    main = [(k, n, t) for n in ns for naive, tiled in swept(fair) for k, t in [(naive, NAIVE_TILE)] + [(tiled, t) for t in tiles]]
    more = [(label, effects_n, t) for t in tiles for label in variants() if label not in ("naive", "tiled")]
    # the ladder's rungs, then the search's pick they climb to (its row labelled "best" in runs before it had a name)
    ladder = [("tiled", ladder_n, 32)] + [(name, ladder_n, 0) for name in LADDER + [LADDER_TOP]
                                          if name not in ("naive", "tiled")]
    named = [(name, n, 0) for n in kernels_n or () for name in kernels]
    return main + (more if effects_n else []) + (ladder if ladder_n else []) + (named if kernels_n else [])


def check(tiles, kernels=(), kernels_n=()):
    """A ValueError, saying what to fix, for options that would profile the wrong thing or nothing: a tile
    width outside 1…32, a kernel name the registry lacks, `kernels` without `kernels_n` or the reverse."""
    from tiledlab.core.launch import resolve, validate_tile
    for tile in tiles:
        validate_tile(tile)
    for name in kernels:
        resolve(name)
    if kernels and not kernels_n:
        raise ValueError(f"--kernels {' '.join(kernels)} needs --kernels-n N..., the sizes to profile them at")
    if kernels_n and not kernels:
        raise ValueError(f"--kernels-n {' '.join(map(str, kernels_n))} needs --kernels NAME..., the kernels to "
                         "profile at those sizes")


def roof_labels(steps):
    """Labels of the roofs child's launches, in launch order."""
    return ["roof: FP32 FMA", "roof: DRAM read", "roof: L2 read", "roof: shared read", "chase shared, 0 steps",
            f"chase shared, {steps} steps", "chase DRAM cold, 0 steps", f"chase DRAM cold, {steps} steps"]


def child(kind, spec):
    """What runs under ncu: each launch once (kernels are compiled before their launch, unseen)."""
    import numpy as np
    from numba import cuda

    from tiledlab.core.operands import operands
    if kind == "matmul":
        from tiledlab.core.launch import prepare
        from .effects import variants
        kernels = variants()
        for label, n, tile in spec:
            launch = prepare(kernels.get(label, label), *operands(n, n, n, seed=n), tile or None)
            cuda.synchronize()
            launch()
            cuda.synchronize()
    elif kind == "cublas":
        from tiledlab.experiments.cublas import import_cupy, sgemm
        sgemm(*operands(spec, spec, spec, seed=spec))()
        import_cupy().cuda.runtime.deviceSynchronize()
    elif kind == "triton":  # autotuned first; only the chosen configuration's launch is in the NVTX range
        import torch
        from tools.measure.triton_peer import Launch
        launch = Launch(*operands(spec, spec, spec, seed=spec))
        launch().result()
        torch.cuda.nvtx.range_push(TRITON_RANGE)
        launch().result()
        torch.cuda.nvtx.range_pop()
    elif kind == "roofs":
        from . import latency, peaks
        from .facts import device_facts
        (_, l2_half), = peaks.l2_buffers(device_facts("profile").l2_bytes, (2,))
        for setup in (lambda: peaks.fma_setup(*peaks.BEST_FMA), lambda: peaks.stream_setup(1 << 30, 1),
                      lambda: peaks.stream_setup(l2_half, max(1, (2 << 30) // l2_half)),
                      lambda: peaks.shared_setup(4096)):
            launch = setup()[0]  # the sizes of peaks.run's timed rows
            launch()
            cuda.synchronize()
        for words, stride, shared in ((latency.SHARED_WORDS, 1, True), (64 << 20, latency.LINE_WORDS, False)):
            nxt, order = latency.ring(words, stride)
            kernel = latency.shared_kernel(np.uint32) if shared else latency.chase
            kernel.compile("void(uint32[::1], uint32, int32, uint32[::1])")
            d_nxt, out = cuda.to_device(nxt), cuda.device_array(1, np.uint32)
            start = np.uint32(order[len(order) // 2])  # never walked before in this process: cold
            for steps in (0, spec):
                kernel[1, 1](d_nxt, start, np.int32(steps), out)
                cuda.synchronize()


TRITON_RANGE = "tiledlab-triton"  # the NVTX range ncu profiles in the triton child (autotuning stays outside)


def _job(kind, spec, labels, timeout, log, extra=()):
    child = (f"import sys; sys.path.insert(0, {str(CLONE)!r}); from tools.measure.profile import child; "
             f"child({kind!r}, {json.dumps(spec)})")
    found, used, dropped = counters([sys.executable, "-c", child], extra=extra, timeout=timeout, log=log)
    if dropped:
        log(f"metrics dropped (unknown to this ncu or GPU): {dropped}")
    if labels is not None and len(found) != len(labels):
        log(f"ncu reported {len(found)} launches for {len(labels)} labels: the rows keep ncu's kernel names")
    rows = []
    for k, (_, kernel_name, values) in enumerate(found):
        label = labels[k] if labels is not None and k < len(labels) else {}
        rows.append({**label, "ncu_kernel": kernel_name[:80], **values})
    return rows


def run(ns=(1024,), tiles=(8, 16, 32), effects_n=None, cublas_n=(), roofs=False, chase_steps=20000, log=print,
        ladder_n=None, fair=False, kernels=(), kernels_n=(), triton_n=(), saved=None):
    """Counters for every launch (see the module's docstring), with `derived()` figures, one row each; cuBLAS and
    Triton at each N of `cublas_n` and `triton_n`. `saved(rows)` after each ncu run, with every row so far."""
    check(tiles, kernels, kernels_n)  # before ncu or a GPU is looked for: a typo costs no profiling run
    if shutil.which("ncu") is None:
        raise Unavailable("ncu (Nsight Compute) is not on PATH; profile needs it")
    require_gpu("profile")
    from tiledlab.experiments.device import properties
    sms = properties()["sms"]
    version = subprocess.run([shutil.which("ncu"), "--version"], capture_output=True, text=True).stdout.strip()
    rows = []

    def add(new):  # with their derived figures; saved at once, so that a run stopped later keeps them
        rows.extend({**r, **derived(r, sms), "ncu": version.splitlines()[-1] if version else ""} for r in new)
        if saved:
            saved(rows)
    spec = launches(ns, tiles, effects_n, ladder_n, fair, kernels, kernels_n)
    if spec:
        add(_job("matmul", spec, [{"kernel": k, "N": n, "tile": t} for k, n, t in spec], 900, log))
    for n in cublas_n or ():
        add([{**r, "kernel": "cublas", "N": n, "tile": 0} for r in _job("cublas", n, None, 300, log)
             if not r["ncu_kernel"].startswith(CUPY_OWN)])
    if triton_n:
        from tools.measure import triton_peer
        if not triton_peer.available():
            raise Unavailable("--triton-n needs Triton and PyTorch (pip install triton torch)")
    for n in triton_n or ():
        add([{**r, "kernel": "triton", "N": n, "tile": 0}
             for r in _job("triton", n, None, 600, log, ("--nvtx", "--nvtx-include", f"{TRITON_RANGE}/"))])
    if roofs:
        add(_job("roofs", chase_steps, [{"kernel": name, "N": "", "tile": ""} for name in roof_labels(chase_steps)],
                 300, log))
    return rows
