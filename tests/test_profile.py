import pytest

from tiledlab.experiments import profile

SAMPLE = '''==PROF== Connected to process 123
==PROF== Profiling "naive": 0%....50%....100% - 3 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","123","python3","h","_Z5naive","1","7","(16, 16, 1)","(64, 64, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed_op_global_ld.sum","inst","67,108,864"
"0","123","python3","h","_Z5naive","1","7","(16, 16, 1)","(64, 64, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","8,388,608"
"1","123","python3","h","_Z5tiled","1","7","(32, 32, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed_op_global_ld.sum","inst","2,097,152"
"1","123","python3","h","_Z5tiled","1","7","(32, 32, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","n/a"
'''


def test_parse_and_tidy_ncu_csv():
    found = profile.parse_ncu_csv(SAMPLE)
    assert found[0]["smsp__inst_executed_op_global_ld.sum"] == 67108864
    assert "gpu__time_duration.sum" not in found[1]  # a value ncu could not collect is left out, not invented
    rows = profile.tidy(found, [("naive", 1024, 16), ("tiled", 1024, 32)])
    assert rows[0]["global_load_instructions"] == 67108864 and rows[0]["dram_bytes_read"] == 8388608
    assert rows[1]["kernel"] == "tiled" and rows[1]["time_ns"] == ""


def test_no_table_is_an_error():
    with pytest.raises(ValueError, match="no CSV table"):
        profile.parse_ncu_csv("==ERROR== something failed")


def test_launch_order():
    assert profile.launches([64], [8, 16]) == [("naive", 64, 16), ("tiled", 64, 8), ("tiled", 64, 16)]


def test_without_ncu_it_says_so_and_fails(monkeypatch, capsys):
    from tiledlab import cli
    monkeypatch.setattr(profile.shutil, "which", lambda name: None)
    assert cli.main(["profile", "--out", "unused"]) != 0
    assert "ncu (Nsight Compute) is not on PATH" in capsys.readouterr().err
