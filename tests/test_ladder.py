"""The ladder experiment's bookkeeping (with a fake clock on the simulator), its SASS counting, and the
CLI's refusal to time anything without a GPU."""
import csv
from types import SimpleNamespace

import pytest

import tiledlab
from tools.measure import ladder, sass
from tiledlab.experiments.timing import Timing

SASS = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   LDG.E R3, desc[UR4][R4.64] ;
        /*0020*/                   STS [R6], R3 ;
        /*0030*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
.L_x_1:
        /*0040*/                   LDS.128 R8, [R2] ;
        /*0050*/                   LDS R12, [R2+0x10] ;
        /*0060*/                   FFMA R16, R8, R12, R16 ;
        /*0070*/                   FFMA R17, R9, R12, R17 ;
        /*0080*/              @P0  BRA `(.L_x_1) ;
        /*0090*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00a0*/              @P1  BRA `(.L_x_0) ;
        /*00b0*/                   STL [R1], R16 ;
        /*00c0*/                   EXIT ;
"""


def test_sass_counts_the_innermost_loop_with_the_most_ffma():
    row = sass.summary(SASS)
    assert (row["loop_ffma"], row["loop_lds128"], row["loop_lds32"], row["loop_total"]) == (2, 1, 1, 5)
    assert row["loop_bar"] == row["loop_ldg"] == 0 and row["loop_ffma_share"] == 0.4
    assert row["kernel_local_insts"] == 1


SMALL = [("tiled", "tiled", {"T": 4}, "lesson"),
         ("regtile_2d", "regtile_2d", dict(BM=16, BN=32, BK=8, TM=4, TN=4), "ladder"),
         ("s_128x256x8_8x16", "s_128x256x8_8x16", dict(BM=32, BN=64, BK=8, TM=4, TN=8), "search")]


def test_rows_carry_speed_share_of_cublas_errors_and_formulas():
    fake = Timing(2.0, 1.5, 3.0, 3, "fake clock", 4)  # every kernel: 2 ms; cuBLAS: 1 ms
    rows = ladder.measure(SMALL, [8, 16], timer=lambda launch: fake, progress=False, odd_shape=(5, 23, 7),
                          blas=lambda A, B, timer: (Timing(1.0, 1.0, 1.0, 3, "fake clock"), A @ B),
                          facts=lambda kernel: {"regs": 40})
    assert [(r["kernel"], r["N"]) for r in rows] == [(k, n) for n in (8, 16) for k in ("cublas", "tiled", "regtile_2d",
                                                                                         "s_128x256x8_8x16")]
    for r in rows:
        assert r["tflops"] == pytest.approx(2 * r["N"] ** 3 / (r["median_ms"] * 1e-3) / 1e12)
        assert r["rel_err"] < 1e-6 and r["reference"] == "float64"
    kernels = [r for r in rows if r["kernel"] != "cublas"]
    assert all(r["pct_cublas"] == pytest.approx(50) and r["launches_per_sample"] == 4 for r in kernels)
    assert all(r["odd_shape_rel_err"] < 1e-6 and r["regs"] == 40 and r["compile_s"] >= 0 for r in kernels)
    by = {(r["kernel"], r["N"]): r for r in rows}
    assert by["tiled", 8]["config"] == "T=4" and by["tiled", 8]["shared_reads_per_fma"] == 2
    assert by["regtile_2d", 16]["config"] == "16×32×8, 4×4" and by["regtile_2d", 16]["threads"] == 32
    assert by["regtile_2d", 16]["shared_reads_per_fma"] == 0.5  # (4 + 4)/(4·4)
    # one clamped 32×64 block: 32 rows of A and 64 columns of B, 16 deep, for 32·64·16 multiply-adds
    assert by["s_128x256x8_8x16", 16]["global_loads_per_fma"] == (32 * 16 + 64 * 16) / (32 * 64 * 16)
    assert set(rows[1]) >= set(ladder.FIELDS) - set(ladder.SASS_FIELDS) - {"launch_bounds"} | {"regs"}
    assert [r["kernel"] for r in ladder.sass_rows(rows)] == ["tiled", "regtile_2d", "s_128x256x8_8x16"]


def test_default_jobs_are_the_lesson_the_rungs_and_the_search():
    jobs = ladder.jobs()
    labels = [j[0] for j in jobs]
    assert labels[:3] == ["naive", "tiled", "regtile_1d"] and jobs[1][2] == {"T": 32}
    assert "best" not in labels and tiledlab.core.registry.LADDER_TOP in labels  # timed once, under its own name
    assert [j[0] for j in ladder.jobs(["regtile_2d", "best"])] == ["regtile_2d", "best"]
    with pytest.raises(ValueError, match="kernel must be one of"):
        ladder.jobs(["fastest"])


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="checks the simulator's refusal")
def test_cli_ladder_refuses_on_the_simulator(tmp_path, capsys):
    from tools import cli
    run = SimpleNamespace(returncode=cli.main(["ladder", "--n", "64", "--out", str(tmp_path)]), stderr=capsys.readouterr().err)
    assert run.returncode == 3 and "needs a real GPU" in run.stderr  # 3: cannot run here
    assert not (tmp_path / "ladder.csv").exists()


def test_bench_times_kernels_by_name(tmp_path, tiledlab_cli):
    run = tiledlab_cli("bench", "--n", "8", "--tile", "4", "--kernels",
                       "regtile_2d", "--repeats", "1", "--warmup", "0", "--quiet", "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(open(tmp_path / "bench.csv")))
    named = [r for r in rows if r["kernel"] == "regtile_2d"]
    assert len(named) == 1 and named[0]["tile"] == "" and float(named[0]["rel_err"]) < 1e-5


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="a GPU gives no reason to refuse")
def test_ladder_run_needs_a_gpu():
    from tiledlab.experiments import Unavailable
    with pytest.raises(Unavailable, match="needs a real GPU"):
        ladder.run([8])


def test_profile_adds_the_ladder_at_one_n():
    from tools.measure import profile
    spec = profile.launches([64], [8], ladder_n=4096)
    assert spec[:2] == [("naive", 64, 16), ("tiled", 64, 8)]
    assert spec[2] == ("tiled", 4096, 32) and spec[-1] == (tiledlab.core.registry.LADDER_TOP, 4096, 0)
    assert ("regtile_vec", 4096, 0) in spec and ("naive", 4096, 16) not in spec
    assert {"local_ld_inst", "local_st_inst"} <= set(profile.METRICS)  # spills show as local-memory traffic


def test_a_peer_is_timed_like_cublas_and_measured_against_it():
    from tiledlab.experiments.timing import Timing

    def timer(launch):
        return Timing(2.0, 2.0, 2.0, 1, "cuda events")

    def blas(A, B, timer):
        return Timing(1.0, 1.0, 1.0, 1, "cuda events"), A @ B

    def peer(A, B, t):
        assert t is timer  # the same timer as cuBLAS's and our kernels'
        return Timing(1.25, 1.25, 1.25, 1, "cuda events"), A @ B, "BLOCK_M: 128"

    rows = ladder.measure_at(32, [], timer, blas, {}, _Bar(), peer=peer)
    assert [r["kernel"] for r in rows] == ["cublas", "triton"]
    assert rows[1]["pct_cublas"] == 80.0 and rows[1]["config"] == "BLOCK_M: 128" and rows[1]["group"] == "triton"
    assert ladder.sass_rows(rows) == []  # peers have no SASS of ours


class _Bar:
    def set_postfix_str(self, text):
        pass

    def update(self):
        pass


def test_the_async_and_dynamic_rungs_run_after_the_search():
    from tiledlab.core.registry import family
    ASYNC, DYNAMIC = family("async"), family("dynamic")
    groups = [g for *_, g in ladder.jobs()]
    tail = ["async"] * len(ASYNC) + ["dynamic"] * len(DYNAMIC)
    assert ASYNC and DYNAMIC and groups[-len(tail):] == tail
    assert not {"async", "dynamic"} & {g for *_, g in ladder.jobs(search=False)}
