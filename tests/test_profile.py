"""Nsight Compute plumbing: parsing, derived figures, dropping unknown metrics, and the refusal without ncu."""
import os
import sys

import pandas as pd
import pytest

from tiledlab.experiments import profile as binds
from tools.measure import profile

SAMPLE = '''==PROF== Connected to process 1
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","python3","h","naive","1","7","(16, 16, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum","inst","68,719,476,736"
"0","1","python3","h","naive","1","7","(16, 16, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","smsp__inst_issued.sum","inst","77,309,411,328"
"0","1","python3","h","naive","1","7","(16, 16, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","sm__cycles_elapsed.avg.per_second","hz","1,980,000,000"
"1","1","python3","h","tiled","1","7","(16, 16, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","launch__occupancy_limit_registers","block","8"
"1","1","python3","h","tiled","1","7","(16, 16, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","launch__occupancy_limit_warps","block","8"
"1","1","python3","h","tiled","1","7","(16, 16, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","launch__occupancy_limit_blocks","block","32"
"1","1","python3","h","tiled","1","7","(16, 16, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","n/a"
'''


def test_parse_keeps_kernel_names_and_skips_missing_values():
    rows = profile.parse(SAMPLE)
    assert [(i, k) for i, k, _ in rows] == [(0, "naive"), (1, "tiled")]
    assert rows[0][2]["smsp__inst_issued.sum"] == 77309411328
    assert "gpu__time_duration.sum" not in rows[1][2]


def test_derived_figures_from_counters():
    column = {m: c for c, m in profile.METRICS.items()}
    naive = {column[m]: v for m, v in profile.parse(SAMPLE)[0][2].items()}
    d = profile.derived(naive, sms=132)
    assert d["inst_issued_per_warp_fma"] == pytest.approx(36.0)
    assert d["bound_issue_ms"] == pytest.approx(77309411328 / (132 * 4) / 1.98e9 * 1e3)
    assert d["bound_fma_ms"] == pytest.approx(68719476736 / (132 * 128) / 1.98e9 * 1e3)
    tiled = {column[m]: v for m, v in profile.parse(SAMPLE)[1][2].items()}
    d = profile.derived(tiled, sms=132)
    assert d["blocks_per_sm"] == 8 and d["occupancy_limiter"] == "registers+warps"


def test_a_rejected_metric_is_found_on_the_error_line():
    names = ["dram__bytes_read.sum", "dram__bytes.sum.peak_sustained", "lts__t_bytes.sum"]
    text = "==ERROR== Failed to find metric dram__bytes.sum.peak_sustained\n==PROF== Disconnected"
    assert profile.rejected(text, names) == {"dram__bytes.sum.peak_sustained"}


def test_metric_names_are_well_formed():
    for column, name in profile.METRICS.items():
        unit, _, rest = name.partition("__")
        assert unit in {"gpu", "sm", "smsp", "l1tex", "lts", "dram", "launch"} and rest, name
        if unit != "launch" and name != "sm__maximum_warps_per_active_cycle_pct":  # that one has no suffix
            assert "." in name, name  # counters need a rollup (.sum, .avg, ...) or a ratio suffix
    assert profile.METRICS["shared_ld_wavefronts"] == "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    assert profile.METRICS["ffma"] == "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"


def test_no_table_is_an_error():
    with pytest.raises(ValueError, match="no CSV table"):
        profile.parse("==ERROR== something failed")


def test_launch_order():
    assert profile.launches([64], [8, 16]) == [("naive", 64, 16), ("tiled", 64, 8), ("tiled", 64, 16)]
    with_effects = profile.launches([64], [8], effects_n=128)
    assert with_effects[:2] == [("naive", 64, 16), ("tiled", 64, 8)]
    assert ("tiled sB transposed padded", 128, 8) in with_effects and ("tiled", 128, 8) not in with_effects
    assert profile.launches([64], [8], fair=True) == [("naive", 64, 16), ("tiled", 64, 8),
                                                      ("naive_unsigned", 64, 16), ("tiled_unsigned", 64, 8)]


def test_without_ncu_it_says_so_and_fails(monkeypatch, capsys):
    from tools import cli
    monkeypatch.setattr(profile.shutil, "which", lambda name: None)
    assert cli.main(["profile", "--out", "unused"]) != 0
    assert "ncu (Nsight Compute) is not on PATH" in capsys.readouterr().err


FAKE_NCU = r'''#!/usr/bin/env python3
import subprocess, sys
args = sys.argv[1:]
if args[:1] == ["--query-metrics"]:
    print("Device GH100")
    for i in range(60):
        print(f"filler__metric_{i} Counter # filler")
    print("smsp__inst_issued Counter # of warp instructions issued")
    print("gpu__time_duration Counter # duration")
    sys.exit(0)
metrics = args[args.index("--metrics") + 1].split(",")
if "gpu__time_duration.sum" in metrics:
    print("==ERROR== Failed to find metric gpu__time_duration.sum", file=sys.stderr)
    sys.exit(1)
command = args[args.index("--metrics") + 2:]
subprocess.run(command, check=True)
print('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"')
for i, kernel in enumerate(["naive", "tiled"]):
    for m in metrics:
        print(f'"{i}","{kernel}","{m}","inst","{1000 * (i + 1):,}"')
'''


def test_profile_drops_unknown_and_rejected_metrics_and_labels_rows(tmp_path, monkeypatch):
    ncu = tmp_path / "ncu"
    ncu.write_text(FAKE_NCU)
    ncu.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    profile._listing.clear()
    wanted = {"inst_issued": "smsp__inst_issued.sum", "time_ns": "gpu__time_duration.sum",
              "regs": "launch__registers_per_thread", "nonsense": "nosuch__metric.sum"}
    rows, used, dropped = profile.counters([sys.executable, "-c", "pass"], metrics=wanted, log=lambda *a: None)
    assert set(dropped) == {"nosuch__metric.sum", "gpu__time_duration.sum"}
    assert used == ["smsp__inst_issued.sum", "launch__registers_per_thread"]
    assert [(i, k, v["inst_issued"], v["regs"]) for i, k, v in rows] == [(0, "naive", 1000, 1000), (1, "tiled", 2000, 2000)]
    profile._listing.clear()


OLD_SAMPLE = '''==PROF== Connected to process 123
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","123","python3","h","_Z5naive","1","7","(16, 16, 1)","(64, 64, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed_op_global_ld.sum","inst","67,108,864"
"0","123","python3","h","_Z5naive","1","7","(16, 16, 1)","(64, 64, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","8,388,608"
"1","123","python3","h","_Z5tiled","1","7","(32, 32, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed_op_global_ld.sum","inst","2,097,152"
"1","123","python3","h","_Z5tiled","1","7","(32, 32, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","n/a"
'''


def test_parse_and_tidy_ncu_csv():
    found = profile.parse(OLD_SAMPLE)
    assert found[0][2]["smsp__inst_executed_op_global_ld.sum"] == 67108864
    assert found[0][2]["dram__bytes_read.sum"] == 8388608
    assert "gpu__time_duration.sum" not in found[1][2]  # a value ncu could not collect is left out, not invented
    assert found[1][1] == "_Z5tiled" and found[1][2]["smsp__inst_executed_op_global_ld.sum"] == 2097152


def test_flop_per_byte_counts_two_flop_per_ffma_at_every_level():
    r = {"ffma": 1000, "dram_read_bytes": 300, "dram_write_bytes": 100, "l2_bytes": 500, "shared_bytes": 250,
         "global_ld_inst": 2, "shared_ld_inst": 3}
    d = profile.derived(r, sms=132)
    assert d["flop_per_dram_byte"] == 2000 / 400
    assert d["flop_per_l2_byte"] == 2000 / 500
    assert d["flop_per_shared_byte"] == 2000 / 250
    assert d["flop_per_load_instruction_byte"] == 2000 / (5 * 32 * 4)  # a warp's instruction: 32 lanes × 4 bytes


def test_cupys_own_kernels_are_not_cublas_rows(monkeypatch):
    import types

    from tiledlab.experiments import device
    monkeypatch.setattr(profile.shutil, "which", lambda name: "/bin/true")
    monkeypatch.setattr(profile, "require_gpu", lambda what: None)
    monkeypatch.setattr(device, "properties", lambda: {"sms": 132})
    monkeypatch.setattr(profile.subprocess, "run", lambda *a, **k: types.SimpleNamespace(stdout="ncu 2025.1"))

    def job(kind, spec, labels, timeout, log):  # what ncu reports: CuPy copies an operand before the GEMM
        return [{"ncu_kernel": "cupy_copy__float_float32"}, {"ncu_kernel": "sm80_xmma_gemm_f32f32"}] if kind == "cublas" else []
    monkeypatch.setattr(profile, "_job", job)
    saved = []
    rows = profile.run(ns=(), tiles=(), cublas_n=[64, 128], log=lambda *a: None, saved=lambda r: saved.append(len(r)))
    assert [(r["kernel"], r["N"], r["ncu_kernel"]) for r in rows] == [("cublas", 64, "sm80_xmma_gemm_f32f32"),
                                                                      ("cublas", 128, "sm80_xmma_gemm_f32f32")]
    assert saved == [1, 2]  # after each ncu run: a profile stopped later keeps the rows before


def test_co_limits_name_every_resource_near_the_largest_bound():
    row = {"bound_issue_ms": 9.7, "bound_shared_ms": 13.4, "bound_lsu_ms": 12.3, "bound_fma_ms": 2.1}
    assert binds.co_limits(row) == (["shared-memory wavefronts", "load/store unit"], 13.4)
    assert binds.co_limits(row, within=0.01) == (["shared-memory wavefronts"], 13.4)
    assert binds.co_limits({"bound_issue_ms": 5.0, "bound_shared_ms": float("nan")}) == (["issue"], 5.0)
    assert binds.co_limits({"bound_issue_ms": 5.0, "bound_shared_ms": pd.NA, "bound_lsu_ms": None}) == (["issue"], 5.0)
    assert binds.co_limits({}) == ([], None)


def test_stall_names_are_read_from_top_stalls_and_each_has_a_meaning():
    names = binds.stall_names("long_scoreboard 71%, not_selected 8%, lg_throttle 6%", "mio_throttle 37%, barrier 18%, not_selected 16%")
    assert names == ["long_scoreboard", "not_selected", "lg_throttle", "mio_throttle", "barrier"]
    assert binds.stall_names("nonsense 50%") == []
    assert all(binds.STALLS[n] for n in profile.STALL_REASONS)


def test_what_binds_is_a_resource_only_when_it_is_busy_most_of_the_time():
    row = {"bound_issue_ms": 9.7, "bound_shared_ms": 13.4, "bound_lsu_ms": 12.3, "bound_fma_ms": 2.1}
    assert binds.what_binds({**row, "time_ms": 17.0}) == "shared-memory wavefronts + load/store unit"
    assert binds.what_binds({**row, "time_ms": 27.0}).startswith("latency (no resource busy 67%")
    assert binds.what_binds({"time_ms": 5.0}) == "" == binds.what_binds({**row, "time_ms": pd.NA})  # nothing to weigh


def test_named_kernels_follow_the_ladder_and_best_is_the_ladder_rung():
    spec = profile.launches([64], [8], kernels=["a_64x128x16_8x8_s3", "s_128x256x8_8x16_warp"], kernels_n=[1024, 4096])
    assert spec[-4:] == [("a_64x128x16_8x8_s3", 1024, 0), ("s_128x256x8_8x16_warp", 1024, 0),
                         ("a_64x128x16_8x8_s3", 4096, 0), ("s_128x256x8_8x16_warp", 4096, 0)]
    assert profile.launches([64], [8], kernels=["a_64x128x16_8x8_s3"]) == profile.launches([64], [8])  # no N


@pytest.mark.parametrize("stop", ["timeout", "interrupted"])
def test_a_tool_stopped_takes_what_it_started_with_it(stop):
    """A tool (ncu, compute-sanitizer) run by run_alone is killed with its children however the wait ends: its
    timeout, or a test's time limit raised inside the wait (a GPU suite's run left such orphans holding the card)."""
    import signal
    import subprocess

    from tools.measure.profile import run_alone
    marker = "sleep 97.31"  # a child the tool leaves running
    if stop == "interrupted":
        def limit(*_):
            raise RuntimeError("the test's time limit")
        old = signal.signal(signal.SIGALRM, limit)
        signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises((RuntimeError, subprocess.TimeoutExpired)):
            run_alone(["bash", "-c", f"{marker} & {marker}"], timeout=0.5 if stop == "timeout" else 30)
    finally:
        if stop == "interrupted":
            signal.signal(signal.SIGALRM, old)
    assert not subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
