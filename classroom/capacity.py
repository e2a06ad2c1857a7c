"""How many students one machine serves: N students run a notebook at once, each in a kernel of their own
(as on the class server), and each one's time, CPU time and peak memory are measured as N grows.

    python -m classroom.capacity --students 1 2 4 --repeats 3 --out classroom/data/capacity.csv  # here: the simulator
    python -m classroom.capacity --students 1 4 16 40 --out capacity-gpu.csv                    # on a GPU machine

A student is a process that runs the notebook top to bottom in a fresh kernel (nbclient), as Run All does;
its kernel's CPU time and peak resident memory come from the kernel process itself (getrusage of the
reaped child). On a GPU the round's peak GPU memory in use is sampled from nvidia-smi. One CSV row per
student per round, with the round's provenance; rows are written after each round, so a run stopped at
its time limit keeps the rounds it finished.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from .series import NOTEBOOKS

NOTEBOOK = NOTEBOOKS / "04_whole_matrix.ipynb"
FIELDS = ["notebook", "students", "repeat", "student", "wall_s", "kernel_cpu_s", "kernel_peak_rss_mib",
          "round_wall_s", "gpu_memory_used_mib", "load_before", "machine", "backend", "device",
          "compute_capability", "numba", "numba_cuda", "numpy", "date"]


def one_student(notebook):
    """Run `notebook` in a fresh kernel; its wall time, and the kernel's CPU seconds and peak RSS (MiB)."""
    import nbclient
    import nbformat
    from traitlets.config import Config
    config = Config()
    config.KernelManager.transport = "ipc"  # local sockets: no TCP warning, no port to find
    config.KernelManager.ip = os.path.join(tempfile.mkdtemp(), "kernel")
    nb = nbformat.read(notebook, as_version=4)
    start = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=1800, kernel_name="python3", config=config,
                            resources={"metadata": {"path": str(pathlib.Path(notebook).parent)}}).execute()
    wall = time.perf_counter() - start
    kernel = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel, reaped at shutdown
    return {"wall_s": round(wall, 1), "kernel_cpu_s": round(kernel.ru_utime + kernel.ru_stime, 1),
            "kernel_peak_rss_mib": round(kernel.ru_maxrss / 1024)}  # ru_maxrss: KiB on Linux


def _gpu_memory_used():
    """MiB in use on the first GPU (nvidia-smi), or None without one."""
    if shutil.which("nvidia-smi") is None:
        return None
    done = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                          capture_output=True, text=True)
    return int(done.stdout.split()[0]) if done.returncode == 0 and done.stdout.strip() else None


def one_round(n, notebook):
    """`n` students at once, each a process of its own: their rows, the round's wall time and peak GPU memory."""
    cmd = [sys.executable, "-m", "classroom.capacity", "--one", str(notebook)]
    peak, stop = [], threading.Event()

    def sample():
        while not stop.wait(0.5):
            peak.append(_gpu_memory_used() or 0)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        done = list(pool.map(lambda _k: subprocess.run(cmd, capture_output=True, text=True), range(n)))
    took = time.perf_counter() - start
    stop.set()
    failed = [d.stderr[-2000:] for d in done if d.returncode != 0]
    if failed:
        raise RuntimeError(f"{len(failed)} of {n} students failed; the first:\n{failed[0]}")
    gpu = max(peak) if peak and _gpu_memory_used() is not None else None
    return [json.loads(d.stdout.splitlines()[-1]) for d in done], round(took, 1), gpu


def measure(students, repeats, notebook, out, limit_s, say=print):
    """Every round (each N of `students`, `repeats` times), written to `out` after each; stops starting
    rounds once `limit_s` seconds have gone."""
    import pandas as pd

    from tiledlab.data import stamp
    provenance = {"machine": f"{os.cpu_count()} CPU cores, {platform.machine()}", **stamp()}
    rows, start = [], time.monotonic()
    for n in students:
        for repeat in range(1, repeats + 1):
            if time.monotonic() - start > limit_s:
                say(f"stopped: {limit_s} s gone before {n} students (repeat {repeat})")
                return rows
            load = round(os.getloadavg()[0], 1)  # what else ran on the machine as the round began
            found, took, gpu = one_round(n, notebook)
            rows += [{"notebook": pathlib.Path(notebook).stem, "students": n, "repeat": repeat, "student": k,
                      **r, "round_wall_s": took, "gpu_memory_used_mib": gpu, "load_before": load, **provenance}
                     for k, r in enumerate(found, 1)]
            pd.DataFrame(rows, columns=FIELDS).to_csv(out, index=False)
            say(f"{n} students, repeat {repeat}: {took:.0f} s for all, each "
                f"{min(r['wall_s'] for r in found):.0f}-{max(r['wall_s'] for r in found):.0f} s")
    return rows


def summary(table):
    """The measurements as the guide's table (markdown): per number of students at once, each student's
    seconds for the notebook (median, and the range over students and repeats), the kernel's CPU seconds
    and peak memory (median), and the rounds measured; then one line of provenance."""
    gpu = table["gpu_memory_used_mib"].notna().any()  # on a GPU: the most in use during the round
    rows = ["| students at once | seconds each, median (range) | CPU seconds each | peak memory each (MiB) | rounds |"
            + (" GPU memory in use (MiB) |" if gpu else ""), "| ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if gpu else "")]
    for n, group in table.groupby("students"):
        rows.append(f"| {n} | {group['wall_s'].median():.0f} ({group['wall_s'].min():.0f}–{group['wall_s'].max():.0f}) "
                    f"| {group['kernel_cpu_s'].median():.0f} | {group['kernel_peak_rss_mib'].median():.0f} "
                    f"| {group['repeat'].nunique()} |" + (f" {group['gpu_memory_used_mib'].max():.0f} |" if gpu else ""))
    first = table.iloc[0]
    load = f"{table['load_before'].min():.1f}–{table['load_before'].max():.1f}"
    rows += ["", f"Measured by `python -m classroom.capacity` ({first['notebook']}, Run All in a fresh kernel per "
                 f"student): {first['machine']}, {first['backend']} ({first['device']}), numba {first['numba']}, "
                 f"numba-cuda {first['numba_cuda']}, numpy {first['numpy']}, on {first['date']}; the machine's load "
                 f"average as each round began: {load}."]
    return "\n".join(rows)


def _seconds(text):
    """--limit-s's type: a positive number of seconds."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0  # not a number: refused below
    if not 0 < seconds < float("inf"):  # nan too
        raise argparse.ArgumentTypeError(f"{text}: give a positive number of seconds, e.g. 480")
    return seconds


def parser():
    from tiledlab.cli import Parser, whole_arg
    p = Parser(prog="python -m classroom.capacity", description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=whole_arg("students"), nargs="+", default=[1, 2, 4],
                   help="students at once, one round each")
    p.add_argument("--repeats", type=whole_arg("repeats"), default=1, help="rounds of each size")
    p.add_argument("--notebook", default=str(NOTEBOOK), help="the notebook each student runs")
    p.add_argument("--out", default="capacity.csv", help="the CSV to write")
    p.add_argument("--limit-s", type=_seconds, default=480, help="start no round after this many seconds")
    p.add_argument("--one", metavar="NOTEBOOK", help=argparse.SUPPRESS)  # a student's process
    return p


def _capacity(args):
    """Measure, after refusing what would fail only once the first round is over (tiledlab.cli's exit codes)."""
    from .cli import out_file
    if args.one:
        print(json.dumps(one_student(args.one)))
        return 0
    if not pathlib.Path(args.notebook).is_file():
        raise ValueError(f"--notebook {args.notebook}: no such notebook file; e.g. --notebook {NOTEBOOK}")
    out = out_file(args.out, "--out", "capacity.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    measure(args.students, args.repeats, args.notebook, out, args.limit_s)
    return 0


def main(argv=None):
    from tiledlab.cli import run
    argv = sys.argv[1:] if argv is None else list(argv)
    return run(argv, lambda a: ("measure", parser().parse_args(a)), {"measure": _capacity})


if __name__ == "__main__":
    sys.exit(main())
