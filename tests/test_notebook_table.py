"""notebook.table: the same aligned text from a DataFrame as from a header and rows."""
import pandas as pd

from tiledlab import data
from tiledlab.notebook import table


def printed(capsys, *args, **options):
    table(*args, **options)
    return capsys.readouterr().out


def test_header_and_rows_align_right_with_thousands_separators(capsys):
    assert printed(capsys, ["N", "loads"], [[4, 128], [32, 65536]]).splitlines() == \
        [" N   loads", "--  ------", " 4     128", "32  65,536"]


def test_a_dataframe_prints_as_its_header_and_rows(capsys):
    frame = pd.DataFrame({"N": [4, 32], "loads": [128, 65536]})
    assert printed(capsys, frame) == printed(capsys, ["N", "loads"], [[4, 128], [32, 65536]])


def test_columns_rename_and_formats_leave_missing_values_as_a_dash(capsys):
    peaks = data.load("h200/peaks.csv")
    out = printed(capsys, peaks, columns={"roof": "roof", "datasheet": "datasheet TB/s"},
                  formats={"datasheet": "{:.1f}"}).splitlines()
    assert out[0].split() == ["roof", "datasheet", "TB/s"] and len(out) == 2 + len(peaks)
    l2 = next(line for line in out if line.lstrip().startswith("L2 read"))
    assert l2.endswith("  -")  # no datasheet figure for L2
    fp32 = next(line for line in out if line.lstrip().startswith("FP32"))
    assert fp32.endswith(f"{peaks['datasheet'][0]:.1f}")


def test_whole_numbers_of_a_loaded_file_get_separators(capsys):
    prof = data.load("h200/profile.csv").head(1)
    out = printed(capsys, prof, columns=["kernel", "N", "time_ns"]).splitlines()
    assert out[2].split() == ["naive", "1,024", f"{prof['time_ns'][0]:,}"]
