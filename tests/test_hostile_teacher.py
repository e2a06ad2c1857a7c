"""A careless teacher's command lines (python -m tiledlab, python -m classroom, classroom.capacity): each wrong
one refused in one line with exit 2, before anything runs or is written; never a traceback, never a silently
wrong result. The findings: docs of the probe in the lead's notes (hostile-teacher.md)."""
import json
import os
import pathlib

import pytest

from classroom import capacity, cli as classroom_cli, report, student_copy
from tiledlab.core import best
from tiledlab.counting import outcomes
from tiledlab.experiments import bench, tune
from conftest import simulator_only

NOT_WRITABLE = pathlib.Path("/proc/tiledlab-cannot-write-here")  # mkdir fails there, even as root


def refused(result, *words):
    """Exit 2, and stderr's last line is one `tiledlab: error:` line naming `words`, with no traceback."""
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    return (result.returncode == 2 and "Traceback" not in result.stderr and last.startswith("tiledlab: error: ")
            and all(w in last for w in words))


@pytest.fixture
def never_run(monkeypatch):
    """bench's and tune's runs fail the test: a refusal must come before them."""
    def run(*args, **kwargs):
        raise AssertionError("ran before refusing")
    monkeypatch.setattr(bench, "run", run)
    monkeypatch.setattr(tune, "run", run)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(best.CACHE_ENV, str(tmp_path / "cache"))


# --- python -m tiledlab ----------------------------------------------------------------------------

@pytest.mark.parametrize("kernels, says", [(["tiledd"], "did you mean 'tiled'"), (["best"], "--kernels best")])
def test_tune_refuses_a_kernel_it_cannot_time_in_one_line(kernels, says, tmp_path, cache, never_run, tiledlab_cli):
    result = tiledlab_cli("tune", "--shape", "4x4x4", "--kernels", *kernels, "--out", tmp_path / "out")
    assert refused(result, says), result.stderr  # was a KeyError traceback, exit 4


@simulator_only  # on a GPU the same tune is minutes, not days
def test_tune_on_the_simulator_forecasts_and_refuses_days_of_work(tmp_path, cache, never_run, tiledlab_cli):
    result = tiledlab_cli("tune", "--out", tmp_path / "out")  # the defaults: N up to 8192
    assert refused(result, "--shape 64x64x64", "--force"), result.stderr


def test_tune_with_shapes_and_sizes_tunes_both(tmp_path, cache, monkeypatch, tiledlab_cli):
    tuned = []
    monkeypatch.setattr(tune, "run", lambda shapes, *a, **k: tuned.extend(shapes) or [])
    tiledlab_cli("tune", "--shape", "4x8x4", "--n", "8", "--kernels", "tiled", "--out", tmp_path / "out")
    assert tuned == [(4, 8, 4), (8, 8, 8)]  # --n was dropped silently


@pytest.mark.parametrize("argv", [["bench"], ["tune", "--shape", "4x4x4"], ["takeaways"]])
@pytest.mark.parametrize("empty", ["", " "])
def test_an_empty_out_folder_is_refused_not_the_current_folder(argv, empty, cache, never_run, tiledlab_cli):
    assert refused(tiledlab_cli(*argv, "--out", empty), "--out", "empty")


@pytest.mark.skipif(not pathlib.Path("/proc").is_dir(), reason="needs /proc, where no folder can be made")
@pytest.mark.parametrize("argv", [["bench", "--n", "8", "--tile", "4"], ["tune", "--shape", "4x4x4", "--kernels", "tiled"]])
def test_an_out_folder_that_cannot_be_made_fails_before_the_run(argv, cache, never_run, tiledlab_cli):
    assert refused(tiledlab_cli(*argv, "--out", NOT_WRITABLE), str(NOT_WRITABLE))


def test_a_misspelt_command_is_named(tiledlab_cli):
    assert refused(tiledlab_cli("cout"), "did you mean count?")


# --- python -m classroom ---------------------------------------------------------------------------

def classroom(capsys, *argv):
    code = classroom_cli.main([str(a) for a in argv])
    said = capsys.readouterr()
    return type("Result", (), {"returncode": code, "stdout": said.out, "stderr": said.err})


def outcome(exercise, time, started=None, feedback="Right."):
    return {"exercise": exercise, "passed": True, "feedback": feedback, "time": time, "started": started}


def write(home, *rows):
    (home / "notebooks").mkdir(parents=True)
    (home / "notebooks" / outcomes.FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("row, says", [
    (outcome("1.1", "9999-12-31T23:59:59+00:00", "2026-12-01T10:00:00+00:00"), "not in the future"),  # 5e9 minutes
    (outcome("1.1", "2026-12-01T10:10:00+00:00", "2026-12-02T10:00:00+00:00"), "before the check's"),
    (outcome("1.1", "2026-12-01T10:10:00+00:00", feedback="nope\nsecond line"), "a text of one line")])
def test_a_line_record_never_writes_is_skipped_not_counted(row, says, tmp_path):
    write(tmp_path / "ada", row)
    skipped = []
    assert report.records(tmp_path, skipped).empty
    assert says in skipped[0]


def test_a_students_notebooks_linked_to_anothers_earn_nothing(tmp_path):
    write(tmp_path / "ada", outcome("1.1", "2026-12-01T10:10:00+00:00"))
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "notebooks").symlink_to(tmp_path / "ada" / "notebooks")
    (tmp_path / "mallory").symlink_to(tmp_path / "ada")
    skipped = []
    assert report.records(tmp_path, skipped)["student"].tolist() == ["ada"]
    assert skipped == [f"{tmp_path / 'eve' / 'notebooks'}: a link, not read", f"{tmp_path / 'mallory'}: a link, not read"]


def test_an_output_file_that_is_a_pipe_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "report.csv")  # class-report --csv report.csv hung there
    with pytest.raises(ValueError, match="--csv .*report.csv is a pipe"):
        classroom_cli.out_file(tmp_path / "report.csv", "--csv", "class-report.csv")


def test_nbgrader_refuses_a_misspelt_notebook_before_writing(tmp_path, capsys):
    result = classroom(capsys, "nbgrader", tmp_path / "course", "--notebooks", "01_naive_reads", "02_redundant_read")
    assert refused(result, "02_redundant_read", "did you mean 02_redundant_reads?"), result.stderr
    assert not (tmp_path / "course").exists()  # was: a course of 01 alone, exit 0


def test_student_copys_next_step_quotes_the_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(student_copy, "student_copy", lambda dest: dest)
    dest = tmp_path / "class of 2026"
    result = classroom(capsys, "student-copy", dest)
    assert result.returncode == 0 and f"cd '{dest}' && " in result.stdout, result.stdout


@pytest.mark.parametrize("argv, says", [
    (["--students", "0"], "--students"), (["--repeats", "0"], "--repeats"), (["--limit-s", "nan"], "--limit-s"),
    (["--notebook", "no-such.ipynb"], "no-such.ipynb"), (["--out", "."], "is a folder")])
def test_capacity_refuses_in_one_line_before_any_student_runs(argv, says, capsys, monkeypatch):
    monkeypatch.setattr(capacity, "measure", lambda *a: pytest.fail("measured before refusing"))
    code = capacity.main(argv)
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err, err


def test_class_report_of_an_empty_name_is_not_the_current_folder(capsys):
    assert refused(classroom(capsys, "class-report", ""), "CLASS_DIR")


# --- lab and hub: what goes on to Jupyter -----------------------------------------------------------

@pytest.fixture
def src(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_a.ipynb").write_text("{}")
    return tmp_path / "notebooks"


@pytest.mark.parametrize("typo, ours", [("--dryrun", "--dry-run"), ("--fresch", "--fresh")])
def test_lab_names_a_misspelt_option_of_its_own(typo, ours, src, tiledlab_cli):
    assert refused(tiledlab_cli("lab", "--src", src, typo), typo, f"did you mean {ours}?")


def test_hub_names_a_misspelt_option_instead_of_passing_it_to_jupyterhub(capsys):
    assert refused(classroom(capsys, "hub", "--dryrun"), "did you mean --dry-run?")  # was: the real server started


def test_lab_dry_run_prints_a_command_that_pastes_whole(src, tmp_path, tiledlab_cli):
    dest = tmp_path / "my notebooks"
    result = tiledlab_cli("lab", "--src", src, "--dest", dest, "--dry-run")
    assert result.returncode == 0 and f"jupyter lab '{dest}' " in result.stdout, result.stdout


def test_lab_dest_under_a_file_names_the_file(src, tmp_path, tiledlab_cli):
    (tmp_path / "notes.txt").write_text("not a folder")
    result = tiledlab_cli("lab", "--src", src, "--dest", tmp_path / "notes.txt" / "copy", "--dry-run")
    assert refused(result, f"{tmp_path / 'notes.txt'} is a file, not a folder"), result.stderr  # was: .gitignore: Not a directory
