"""The scripted walkthrough's bookkeeping, without a browser: a walk of some notebooks replaces only their
rows of walkthrough.csv, and the maintainers' tool needs no test code."""
import pathlib
import shutil

import test_layers
from tiledlab import data
from tools import plans
from tools.walkthrough import merged

ROOT = pathlib.Path(__file__).resolve().parents[1]


def lines_of(text, notebook):
    return [line for line in text.splitlines() if line.startswith(f"{notebook},")]


def test_a_walk_of_some_notebooks_replaces_only_their_rows(tmp_path):
    out = tmp_path / "walkthrough.csv"
    shutil.copy(data.path(plans.WALKTHROUGH), out)
    before = out.read_text()
    notebooks = list(dict.fromkeys(line.split(",")[0] for line in before.splitlines()[1:]))
    header = before.splitlines()[0].split(",")
    walked = [dict.fromkeys(header, "x") | {"notebook": nb, "part": f"{nb} {k}", "minutes": 1.5}
              for nb in ("08_new", "03_one_tile_step") for k in (1, 2)]  # a new notebook first, as given
    data.write_rows(merged(out, walked), out)
    after = out.read_text()
    assert after.splitlines()[0] == before.splitlines()[0]
    for nb in notebooks:
        if nb != "03_one_tile_step":
            assert lines_of(after, nb) == lines_of(before, nb), nb  # byte for byte
    assert [line.split(",")[:2] for line in lines_of(after, "03_one_tile_step")] == [
        ["03_one_tile_step", "03_one_tile_step 1"], ["03_one_tile_step", "03_one_tile_step 2"]]
    assert list(dict.fromkeys(line.split(",")[0] for line in after.splitlines()[1:])) == sorted(notebooks + ["08_new"])


def test_the_first_walk_writes_its_rows_alone(tmp_path):
    rows = [{"notebook": "01_x", "part": "Summary", "minutes": 0.5}]
    assert merged(tmp_path / "missing.csv", rows).to_dict("records") == rows


def test_the_walkthrough_needs_no_test_code():
    tools = ROOT / "tools"
    assert test_layers.absolute_imports(tools, "tests") == []
