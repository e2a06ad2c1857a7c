"""The H200's final run without a GPU: tools/final_h200.sh within its budget, tools/install_final.py into a data
folder, and the kernels it measures the ones the exploration (explore.csv) measured."""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tarfile

import pandas as pd
import pytest

from tiledlab import data
from tiledlab.core import registry
from tiledlab.experiments import tune

ROOT = pathlib.Path(__file__).resolve().parents[1]


def tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def final(tmp_path, timeout, **env):
    """tools/final_h200.sh on the simulator, this Python first on PATH; (its output, $OUT)."""
    out = tmp_path / "out"
    run = subprocess.run(["bash", "tools/final_h200.sh"], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, "PATH": f"{pathlib.Path(sys.executable).parent}:{os.environ['PATH']}",
                              "NUMBA_ENABLE_CUDASIM": "1", "OUT": str(out), "WORK": str(tmp_path / "work"), **env})
    assert run.returncode == 0, run.stderr
    return run.stdout, out


def test_a_spent_budget_runs_no_step_and_still_brings_back_its_two_files(tmp_path):
    log, out = final(tmp_path, 60, BUDGET="0")
    assert log.count("not run") == 5 and sorted(os.listdir(out)) == ["final.log", "final.tar.gz"]


def test_the_budget_and_the_wheels_fit_the_device_call():
    budget = int(re.search(r"BUDGET=\$\{BUDGET:-(\d+)\}", (ROOT / "tools/final_h200.sh").read_text()).group(1))
    assert budget + 30 <= 600  # 30 s for the wheels' install, 600 s the device call's most: 10 minutes


@pytest.mark.slow
def test_the_whole_chain_at_tiny_sizes_on_the_simulator(tmp_path):
    log, out = final(tmp_path, 600, SHAPES="40x24x70 33x17x45", ODD="33x17x45", TABLE="s_64x64x8_4x4",
                     CHECK="tiled s_64x64x8_4x4", TUNE="s_64x64x8_4x4", WORKERS="2", PROFILE_N="64")
    assert sorted(os.listdir(out)) == ["final.log", "final.tar.gz"]
    assert all(f"== {step}: exit 0" in log for step in ("tune", "run1", "run2", "run3"))
    assert "ncu (Nsight Compute) is not on PATH" in log  # the profile step fails alone
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "README.md").write_text(data.path("h200/README.md").read_text())
    install = [sys.executable, "tools/install_final.py", str(out / "final.tar.gz"), "--data", str(folder)]
    refused = subprocess.run(install, cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode and "simulator" in refused.stderr and not (folder / "shapes.csv").exists()
    subprocess.run(install + ["--simulator"], cwd=ROOT, check=True, capture_output=True)
    shapes = pd.read_csv(folder / "shapes.csv")
    assert set(shapes["run"]) == {1, 2, 3} and set(shapes["pct_count"]) == {0}  # no cuBLAS on the simulator
    assert set(pd.read_csv(folder / "shapes_checked.csv")["kernel"]) == {"tiled", "s_64x64x8_4x4"}
    assert "run3: exit 0" in (folder / "README.md").read_text()


def fabricated(tmp_path):
    """final.tar.gz and final.log as a GPU run leaves them: three table runs of two points, a tune row, env.txt."""
    work, out = tmp_path / "work", tmp_path / "out"
    (work / "tune").mkdir(parents=True)
    out.mkdir()
    stamp = dict(backend="gpu", device="NVIDIA H200", compute_capability="9.0", numba="0.68.0", numba_cuda="0.30.4",
                 numpy="2.4.6", date="2026-12-02")
    for run, (ours, peer) in enumerate([(86.0, 88.0), (87.0, 86.5), (85.5, 87.5)], 1):
        pd.DataFrame([dict(run=run, shape="4096x4096x4096", kernel=k, pct_cublas=p, **stamp)
                      for k, p in (("cublas", 100.0), ("triton", peer), ("w_128x256x8_8x16_warp16x2", ours))]
                     ).to_csv(work / f"same_run_{run}.csv", index=False)
    pd.DataFrame([dict(M=4096, K=4096, N=4096, kernel="w_128x256x8_8x16_warp16x2", chosen=True, **stamp)]).to_csv(
        work / "tune" / "tune.csv", index=False)
    (work / "env.txt").write_text("2026-12-02T10:00:00Z\nNVIDIA H200, 580.159.04, 1980 MHz, 1980 MHz, 35\n"
                                  "python 3.12.3\nnumba 0.68.0\ntriton 3.6.0\nVersion 2025.3.1.0 (public-release)\n")
    (out / "final.log").write_text("== tune: exit 0 after 70 s of 100 (total 70 s)\nsome table\n"
                                   "== run1: exit 0 after 98 s of 110 (total 168 s)\n")
    with tarfile.open(out / "final.tar.gz", "w:gz") as tar:
        tar.add(work, arcname=".")
    return out / "final.tar.gz"


def test_install_writes_each_point_with_its_spread_and_the_run_s_provenance(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "README.md").write_text("# data\n")
    monkeypatch.setattr(sys, "argv", ["install_final", str(fabricated(tmp_path)), "--data", str(folder)])
    tool("install_final").main()
    shapes = pd.read_csv(folder / "shapes.csv")
    ours = shapes[shapes["kernel"] == "w_128x256x8_8x16_warp16x2"].iloc[0]
    assert (ours["pct_median"], ours["pct_spread"], ours["pct_count"]) == (86.0, 1.5, 3)
    assert pd.read_csv(folder / "tune.csv")["chosen"].all()
    readme = (folder / "README.md").read_text()
    assert "NVIDIA H200, 580.159.04, 1980 MHz" in readme and "triton 3.6.0" in readme and "ncu Version 2025.3.1.0" in readme
    assert "tune: exit 0 after 70 s of 100" in readme and "run1: exit 0" in readme and "some table" not in readme
    again = tool("install_final").readme(readme, "<!-- final run: written by tools/install_final.py -->\nnew\n"
                                                 "<!-- end of the final run -->")
    assert again.count("<!-- final run") == 1 and "new" in again and "tune: exit 0" not in again
    assert "missing (the run did not produce them): shapes_checked.csv, shapes_profile.csv" in capsys.readouterr().out


def test_the_registry_s_large_dynamic_rung_is_the_exploration_s_y_spec():
    same_run = tool("same_run")
    label, spec, min_blocks = next(e for e in same_run.EXPLORE if e[0] == "y_128x256x16_8x16_s3_w16x2")
    explored, kept = same_run.kernel_of(label, spec, min_blocks), registry.KERNELS["d_128x256x16_8x16_s3_w16x2"]
    assert explored.source().replace(label, "K") == kept.source().replace(kept.name, "K")
    assert all(name in registry.KERNELS for name in same_run.TABLE)


def test_tune_s_candidates_each_won_somewhere_and_no_dynamic_rung_did():
    """What registry.py and tune.py say of explore.csv: the kernels of `best` were the fastest numba kernel at
    some shape, the dynamic rungs at none (the split-K rungs, added after it, were not explored)."""
    runs = data.load("h200/explore.csv")
    ours = runs[(runs["shape"] != "odd") & ~runs["kernel"].isin(["cublas", "triton", "best"])]
    fastest = set(ours.loc[ours.groupby("shape")["tflops"].idxmax(), "kernel"])
    assert fastest == set(tune.CANDIDATES) - set(registry.family("split"))
    assert not fastest & set(registry.family("dynamic"))
