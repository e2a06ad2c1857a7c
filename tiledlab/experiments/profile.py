"""Hardware counters of the naive and tiled kernels under Nsight Compute (`ncu`).

Runs `ncu` on a child Python process that launches each kernel once, and returns tidy rows: one per
(kernel, N, tile) with the counters below. Without `ncu`, or on the simulator, it raises Unavailable.
"""
import csv
import io
import shutil
import subprocess
import sys

from . import Unavailable, require_gpu
from .bench import NAIVE_TILE  # the naive kernel runs once per N, in the same blocks as in bench

# tidy column → Nsight Compute metric
METRICS = {
    "global_load_instructions": "smsp__inst_executed_op_global_ld.sum",
    "l1_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1_hit_rate_pct": "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "l2_sectors_read": "lts__t_sectors_srcunit_tex_op_read.sum",
    "dram_bytes_read": "dram__bytes_read.sum",
    "shared_load_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "time_ns": "gpu__time_duration.sum",
}


def launches(ns, tiles):
    """The (kernel, N, tile) launches of the child process, in launch order."""
    return [(k, n, t) for n in ns for k, t in [("naive", NAIVE_TILE)] + [("tiled", t) for t in tiles]]


def parse_ncu_csv(text):
    """{launch ID: {metric name: float}} from `ncu --csv --print-units base` output."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no CSV table in ncu's output")
    found = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        value = row["Metric Value"].replace(",", "")
        try:
            found.setdefault(int(row["ID"]), {})[row["Metric Name"]] = float(value)
        except ValueError:
            continue  # a unit row or a value ncu could not collect
    return found


def tidy(found, order):
    """Tidy rows: one per launch, counters under the column names of METRICS."""
    rows = []
    for (kernel, n, tile), launch_id in zip(order, sorted(found)):
        metrics = found[launch_id]
        rows.append({"kernel": kernel, "N": n, "tile": tile,
                     **{col: metrics.get(name, "") for col, name in METRICS.items()}})
    return rows


def available(ncu):
    """The metrics of METRICS that this ncu and GPU know."""
    listing = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True).stdout
    known = {line.split()[0] for line in listing.splitlines() if line.strip()}
    return [m for m in METRICS.values() if m.rsplit(".", 1)[0] in known]


def _child(ns, tiles):
    import numpy as np
    from numba import cuda

    from ..core.launch import prepare
    for kernel, n, tile in launches(ns, tiles):
        rng = np.random.default_rng(n)
        A, B = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
        launch = prepare(kernel, A, B, tile)
        cuda.synchronize()
        launch()
        cuda.synchronize()


def run(ns=(1024,), tiles=(8, 16, 32)):
    """One row of counters per launch of `launches(ns, tiles)`, with the ncu version."""
    ncu = shutil.which("ncu")
    if ncu is None:
        raise Unavailable("ncu (Nsight Compute) is not on PATH; profile needs it")
    require_gpu("profile")
    metrics = available(ncu)
    child = f"from tiledlab.experiments.profile import _child; _child({list(ns)}, {list(tiles)})"
    cmd = [ncu, "--clock-control", "none", "--csv", "--print-units", "base", "--metrics", ",".join(metrics),
           sys.executable, "-c", child]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ncu failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return [{**r, "ncu": version} for r in tidy(parse_ncu_csv(done.stdout), launches(ns, tiles))]
