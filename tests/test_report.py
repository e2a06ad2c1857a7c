"""`python -m classroom class-report CLASS_DIR`: the outcomes the students' checks recorded, one row per student."""
import json
import pathlib
import os
import subprocess
import sys

import pandas as pd
import pytest

from classroom import cli, report
from tiledlab.cli import BAD_INPUT
from tiledlab.counting import outcomes


def outcome(exercise, passed, time, started, feedback="..."):
    return {"exercise": exercise, "passed": passed, "feedback": feedback, "time": f"2026-12-0{time}+01:00",
            "started": started and f"2026-12-0{started}+01:00"}


def write(folder, *rows):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / outcomes.FILE, "a") as out:
        out.writelines(json.dumps(r) + "\n" for r in rows)


@pytest.fixture
def klass(tmp_path):
    """A class folder as the hub makes it: ada did notebook 1 in class and 3.3 at home, in two sessions of
    notebook 3; grace tried 1.2 twice in the Chinese edition; bob logged in and ran nothing."""
    write(tmp_path / "ada" / "notebooks",
          outcome("1.1", False, "2T10:05:00", "2T10:00:00", "Wrong result for A 5×23 · B 23×7 with tile=4."),
          outcome("1.1", True, "2T10:15:00", "2T10:00:00"),
          outcome("1.2", True, "2T10:20:00", "2T10:00:00", "Right: measured 120."),
          outcome("3.1", True, "2T11:00:00", "2T10:30:00"),
          outcome("3.3", False, "3T20:30:00", "3T20:00:00", "Correct on 6 shapes."),
          outcome("10.1", False, "3T20:40:00", None))
    write(tmp_path / "grace" / "notebooks" / "zh",
          outcome("1.2", False, "2T10:12:00", "2T10:01:00", "not yet: 100 is too low."),
          outcome("1.2", False, "2T10:14:00", "2T10:01:00", "not yet: 130 is too high."))
    (tmp_path / "bob" / "notebooks").mkdir(parents=True)
    (tmp_path / ".hub").mkdir()  # the hub's own state, not a student
    (tmp_path / "jupyterhub.sqlite").write_text("")
    return tmp_path


def test_one_row_per_student_one_column_per_exercise_in_order(klass):
    frame = report.report(klass)
    assert list(frame.index) == ["ada", "bob", "grace"]
    assert list(frame.columns) == ["1.1", "1.2", "3.1", "3.3", "10.1", "minutes 01", "minutes 03", "minutes 10",
                                   "minutes"]
    assert frame.loc["ada", ["1.1", "1.2", "3.3"]].tolist() == ["passed", "passed", "not yet"]  # passed once is passed
    assert frame.loc["grace", "1.2"] == "not yet" and pd.isna(frame.loc["grace", "1.1"])  # never run: blank
    assert frame.loc["bob"].isna().all()


def test_an_nbgrader_assignment_fetched_into_the_working_copy_is_left_out(klass):
    """nbgrader's fetch puts an assignment in the working copy (notebooks/01_naive_reads/), and its checks note
    their outcomes there: nbgrader grades those, and the report reads the working copy's own notebooks."""
    write(klass / "grace" / "notebooks" / "01_naive_reads", outcome("1.1", False, "2T10:30:00", "2T10:20:00"))
    frame = report.report(klass)
    assert pd.isna(frame.loc["grace", "1.1"]) and frame.loc["grace", "1.2"] == "not yet"  # zh/: the edition's


def test_the_csv_is_the_teachers_alone(klass, tmp_path):
    """Each student's results: with system users the students can read the clone the report is written in."""
    csv = tmp_path / "out" / "class-report.csv"
    report.write(klass, csv)
    assert csv.stat().st_mode & 0o777 == 0o600


def test_minutes_run_from_each_kernel_start_to_its_last_check_summed_over_sessions(klass):
    frame = report.report(klass)
    assert frame.loc["ada", "minutes 01"] == 20
    assert frame.loc["ada", "minutes 03"] == 30 + 30  # in class 10:30-11:00, at home 20:00-20:30
    assert frame.loc["ada", "minutes 10"] == 0  # no kernel start recorded: from its first check
    assert frame.loc["ada", "minutes"] == 80 and frame.loc["grace", "minutes"] == 13


def test_what_has_not_passed_yet_keeps_its_last_feedback(klass):
    stuck = report.not_yet(klass)
    assert [(r.student, r.exercise, r.feedback) for r in stuck.itertuples()] == [
        ("ada", "3.3", "Correct on 6 shapes."), ("ada", "10.1", "..."), ("grace", "1.2", "not yet: 130 is too high.")]


def test_the_recorder_writes_what_the_report_reads(tmp_path):
    copy = tmp_path / "lin" / "notebooks"
    copy.mkdir(parents=True)
    (copy / ".gitignore").write_text("*\n")
    outcomes.record("2.2", False, "not yet: 9 is too high.\nThink it through again", copy)
    outcomes.record("2.2", True, "Right: measured 8, 2.", copy)
    assert report.report(tmp_path).loc["lin", "2.2"] == "passed"


def test_the_command_prints_the_table_and_writes_the_csv(klass, tmp_path, capsys):
    csv = tmp_path / "out" / "report.csv"
    assert cli.main(["class-report", str(klass), "--csv", str(csv)]) == 0
    said = capsys.readouterr().out
    assert said.splitlines()[0].split() == ["1.1", "1.2", "3.1", "3.3", "10.1", "minutes", "01", "minutes", "03",
                                            "minutes", "10", "minutes"]
    assert said.splitlines()[4].split() == ["passed", "1/3", "1/3", "1/3", "0/3", "0/3"]
    assert said.splitlines()[5].split() == ["median", "16", "60", "0", "46"]
    assert "grace, 1.2: not yet: 130 is too high." in said and f"wrote {csv}" in said
    back = pd.read_csv(csv, index_col="student")
    assert back.loc["ada", "minutes 03"] == 60 and back.loc["grace", "1.2"] == "not yet"
    assert len(back) == 3


def test_bad_class_folders_are_refused_in_one_line(tmp_path, capsys):
    assert cli.main(["class-report", str(tmp_path / "nowhere")]) == BAD_INPUT
    assert "no such folder" in capsys.readouterr().err
    assert cli.main(["class-report", str(tmp_path), "--csv", str(tmp_path)]) == BAD_INPUT
    assert cli.main(["class-report", str(tmp_path), "--csv", str(tmp_path / "r.csv")]) == 0
    said = capsys.readouterr().out
    assert "no students" in said and "notebooks/" in said and not (tmp_path / "r.csv").exists()  # an empty class


def test_students_who_have_not_checked_anything_yet_are_listed_not_called_no_students(tmp_path, capsys):
    for name in ("ada", "grace"):  # logged in: the server made their notebooks/, no outcomes file yet
        (tmp_path / name / "notebooks").mkdir(parents=True)
    assert cli.main(["class-report", str(tmp_path), "--csv", str(tmp_path / "r.csv")]) == 0
    said = capsys.readouterr().out
    assert "no students" not in said and "2 students (ada, grace)" in said and "none has checked" in said
    assert pd.read_csv(tmp_path / "r.csv")["student"].tolist() == ["ada", "grace"]


def test_a_line_that_is_not_a_trusted_outcome_is_skipped_and_named(klass, tmp_path, capsys):
    """A student can edit their file: a field of the wrong type, an exercise that is no number, a line cut
    short. Each such line is left out of the verdicts and named under the table; the rest still counts."""
    bad = [dict(outcome("2.1", "false", "2T10:30:00", None), note="a string, not a verdict"),
           outcome("../2.2", True, "2T10:31:00", None), outcome("2.2", 1, "2T10:32:00", None),
           outcome("2.2", True, "yesterday", None), dict(outcome("2.2", True, "2T10:33:00", None), started=5),
           dict(outcome("2.2", True, "2T10:34:00", None), time="2026-12-02T10:34:00")]  # no zone
    write(klass / "grace" / "notebooks" / "zh", *bad)  # after her two good lines
    with open(klass / "grace" / "notebooks" / "zh" / outcomes.FILE, "a") as out:
        out.write('{"exercise": "2.2", "passed": tr\n')
    assert cli.main(["class-report", str(klass), "--csv", str(tmp_path / "r.csv")]) == 0
    said = capsys.readouterr().out
    frame = pd.read_csv(tmp_path / "r.csv", index_col="student")
    assert "2.1" not in frame and "2.2" not in frame  # none of them counted: "false" is not passed
    assert frame.loc["grace", "1.2"] == "not yet"  # the good lines of the same file still count
    path = klass / "grace" / "notebooks" / "zh" / outcomes.FILE
    for line, field in ((3, "'passed' is \"false\""), (4, "'exercise' is \"../2.2\""), (5, "'passed' is 1"),
                        (6, "'time' is \"2026-12-0yesterday"), (7, "'started' is 5"), (8, "'time' is"), (9, "not JSON")):
        assert f"{path}, line {line}: {field}" in said, (line, said)


def test_the_string_false_is_not_a_pass(tmp_path):
    write(tmp_path / "lin" / "notebooks", outcome("2.2", "false", "2T10:30:00", None),
          outcome("2.1", False, "2T10:31:00", None))
    skipped = []
    frame = report.report(tmp_path, skipped)
    assert list(frame.columns) == ["2.1", "minutes 02", "minutes"] and frame.loc["lin", "2.1"] == "not yet"
    assert len(skipped) == 1 and "'passed' is \"false\", not true or false" in skipped[0]


def test_a_fifo_or_a_link_is_never_opened(tmp_path):
    """A FIFO in place of the file would block a reader forever; a link could point anywhere on the teacher's
    machine. Neither is opened: the report names them and goes on (in a subprocess, so a hang fails it)."""
    write(tmp_path / "ada" / "notebooks", outcome("1.2", True, "2T10:20:00", None))
    (tmp_path / "bob" / "notebooks").mkdir(parents=True)
    os.mkfifo(tmp_path / "bob" / "notebooks" / outcomes.FILE)
    (tmp_path / "eve" / "notebooks" / "zh").mkdir(parents=True)
    (tmp_path / "eve" / "notebooks" / "zh" / outcomes.FILE).symlink_to(tmp_path / "ada" / "notebooks" / outcomes.FILE)
    done = subprocess.run([sys.executable, "-m", "classroom", "class-report", str(tmp_path), "--csv",
                           str(tmp_path / "r.csv")], capture_output=True, text=True, timeout=120,
                          cwd=report.pathlib.Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert f"{tmp_path / 'bob' / 'notebooks' / outcomes.FILE}: not a regular file, not read" in done.stdout
    assert f"{tmp_path / 'eve' / 'notebooks' / 'zh' / outcomes.FILE}: a link, not read" in done.stdout
    frame = pd.read_csv(tmp_path / "r.csv", index_col="student")
    assert frame.loc["ada", "1.2"] == "passed" and pd.isna(frame.loc["eve", "1.2"])


def test_notebook_0s_questions_show_as_prerequisites(tmp_path):
    """Once notebook 0 asks questions (exercises 0.1, 0.2, ...), one column says how many each student passed."""
    write(tmp_path / "ada" / "notebooks", outcome("0.1", True, "2T10:01:00", "2T10:00:00"),
          outcome("0.2", False, "2T10:02:00", "2T10:00:00"), outcome("0.2", True, "2T10:03:00", "2T10:00:00"),
          outcome("0.3", True, "2T10:04:00", "2T10:00:00"), outcome("1.2", True, "2T10:20:00", "2T10:10:00"))
    write(tmp_path / "grace" / "notebooks", outcome("0.1", True, "2T10:01:00", "2T10:00:00"),
          outcome("0.2", False, "2T10:02:00", "2T10:00:00"))
    write(tmp_path / "lin" / "notebooks", outcome("1.2", True, "2T10:20:00", "2T10:10:00"))
    series = {"00": ("00_start_here", ["0.1", "0.2", "0.3"]), "01": ("01_naive_reads", ["1.1", "1.2"])}
    frame = report.report(tmp_path, series=series)
    assert list(frame.columns[:4]) == [report.PREREQUISITES, "0.1", "0.2", "0.3"]
    assert frame[report.PREREQUISITES].fillna("").tolist() == ["3/3", "1/3", ""]
    assert report.asked()["01"][0] == "01_naive_reads" and "0.1" not in report.asked()["01"][1]  # the series' own


def test_the_form_of_observed_minutes_is_filled_from_the_report(klass, tmp_path, capsys):
    """docs/teaching.md's form, one row per notebook: students, median and slowest minutes, who finished."""
    csv = tmp_path / "report.csv"
    assert cli.main(["class-report", str(klass), "--csv", str(csv)]) == 0
    form = pd.read_csv(tmp_path / "report-minutes.csv", keep_default_na=False)
    assert list(form.columns) == report.FORM
    first = form[form["notebook"] == "01_naive_reads"].iloc[0]
    finished = int(set(report.asked()["01"][1]) <= {"1.1", "1.2"})  # ada passed these: all notebook 1 asks, today
    assert (first["students"], first["minutes_median"], first["minutes_slowest"], first["finished"]) == (2, 16, 20, finished)
    assert first["date"] == "2026-12-02" and first["class"] == klass.name and first["backend"] == ""
    assert form["notebook"].tolist() == ["01_naive_reads", "03_one_tile_step", "10"]  # 10: not in the series
    assert f"wrote {tmp_path / 'report-minutes.csv'}" in capsys.readouterr().out


def test_the_series_notebook_0_asks_the_prerequisites_and_a_class_that_ran_none_shows_no_column(tmp_path):
    """Notebook 0 asks exercises 0.1 to 0.3 (both editions' cells read `# Exercise` or `# 练习`): the column
    appears once a student ran one of them, counted out of the three, and not before (like an exercise's)."""
    assert report.asked()["00"] == ("00_start_here", ["0.1", "0.2", "0.3"])
    write(tmp_path / "ada" / "notebooks", outcome("1.2", True, "2T10:20:00", "2T10:10:00"))
    assert report.PREREQUISITES not in report.report(tmp_path)
    write(tmp_path / "grace" / "notebooks" / "zh", outcome("0.2", True, "2T10:02:00", "2T10:00:00"))
    frame = report.report(tmp_path)
    assert list(frame.columns[:2]) == [report.PREREQUISITES, "0.2"]
    assert frame[report.PREREQUISITES].fillna("").tolist() == ["", "1/3"]


def test_a_csv_that_is_a_device_gets_no_minutes_form_written_beside_it(klass, capsys):
    """--csv /dev/null (or /dev/stdout) writes the report there; the form would be /dev/null-minutes.csv, in /dev."""
    assert cli.main(["class-report", str(klass), "--csv", os.devnull]) == 0
    said = capsys.readouterr().out
    assert "is not a file, so the form of observed minutes was not written" in said
    assert not pathlib.Path(os.devnull + "-minutes.csv").exists()


def test_one_students_folder_given_as_the_class_is_named_with_the_folder_to_give(klass, capsys):
    assert cli.main(["class-report", str(klass / "ada"), "--csv", str(klass / "r.csv")]) == 0
    said = capsys.readouterr().out
    assert "no students" in said and f"is one student's folder: give the class folder that holds it, {klass.resolve()}" in said


def test_the_hubs_admin_is_no_student(klass, tmp_path, monkeypatch, capsys):
    """The teacher logs in to approve the students, and that login makes them a working copy too: the hub's
    admin (TILEDLAB_HUB_ADMIN, else teacher, as jupyterhub_config.py sets it) is left out, and said so."""
    monkeypatch.delenv("TILEDLAB_HUB_ADMIN", raising=False)
    write(klass / "teacher" / "notebooks", outcome("1.1", True, "2T09:00:00", "2T08:59:00"))
    assert cli.main(["class-report", str(klass), "--csv", str(tmp_path / "r.csv")]) == 0
    said = capsys.readouterr().out
    assert "teacher" not in pd.read_csv(tmp_path / "r.csv", index_col="student").index
    assert said.splitlines()[4].split()[:3] == ["passed", "1/3", "1/3"]  # ada of ada, bob and grace
    assert "left out, the hub's admin (not a student): teacher" in said


def test_the_admins_are_read_from_the_hubs_own_database(klass, monkeypatch):
    """Who is admin, as the hub that ran in the class folder recorded it (its own users table), whatever
    TILEDLAB_HUB_ADMIN says where the report runs."""
    import sqlite3
    monkeypatch.setenv("TILEDLAB_HUB_ADMIN", "bob")
    (klass / "lin" / "notebooks").mkdir(parents=True)
    with sqlite3.connect(klass / ".hub" / "jupyterhub.sqlite") as db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, admin BOOLEAN)")
        db.executemany("INSERT INTO users (name, admin) VALUES (?, ?)", [("lin", True), ("bob", False), ("ada", False)])
    assert list(report.report(klass).index) == ["ada", "bob", "grace"]
    assert report.teachers(klass) == ["lin"]


def test_the_feedback_keeps_its_first_line_and_the_cause_the_checker_named(tmp_path):
    """A wrong result's first line says how many elements differ; its last, the cause. Both are kept, on one
    line (the file's format unchanged); a feedback that ends in a printed grid keeps its first line only."""
    copy = tmp_path / "lin" / "notebooks"
    copy.mkdir(parents=True)
    (copy / ".gitignore").write_text("*\n")
    wrong = ("Wrong result for A 5×23 · B 23×7 with tile=4: 35 of 35 elements differ.\n"
             "First difference at C[0, 0]: yours 1.2, numpy 3.4. Around it (rows 0–1, columns 0–1):\n"
             "Yours: [[1.2 2. ]\n       [3.  4. ]]\nSpec : [[3.4 2. ]\n       [3.  4. ]]\n"
             "The product is right while K is a whole number of tiles (K = 20: 5 tile steps) and wrong at K = 23, "
             "whose last tile step is partial (3 of 4 columns of A): loop over all ⌈K/T⌉ = 6 tile steps, and load "
             "zeros past K.\n")
    outcomes.record("3.3", False, wrong, copy)
    outcomes.record("3.1", False, wrong.rsplit("\n", 2)[0], copy)  # no cause found: it ends in Spec's grid
    stuck = {r.exercise: r.feedback for r in report.not_yet(tmp_path).itertuples()}
    assert stuck["3.3"] == ("Wrong result for A 5×23 · B 23×7 with tile=4: 35 of 35 elements differ. … The product "
                            "is right while K is a whole number of tiles (K = 20: 5 tile steps) and wrong at K = 23, "
                            "whose last tile step is partial (3 of 4 columns of A): loop over all ⌈K/T⌉ = 6 tile "
                            "steps, and load zeros past K.")
    assert stuck["3.1"] == "Wrong result for A 5×23 · B 23×7 with tile=4: 35 of 35 elements differ."


def test_a_wrong_prediction_keeps_its_verdicts_not_the_advice_that_follows_each(tmp_path, monkeypatch):
    """predict() ends every wrong answer with the same advice: the report keeps the verdicts above it, each
    number's where the prediction is a tuple (its first line may be the one number that is right)."""
    from tiledlab.counting.exercises import predict
    copy = tmp_path / "lin" / "notebooks"
    copy.mkdir(parents=True)
    (copy / ".gitignore").write_text("*\n")
    monkeypatch.chdir(copy)
    monkeypatch.setattr(outcomes, "calling_exercise", lambda frame: ("0.2", "# Exercise 0.2\npredict(...)", {}))
    predict((3, 4), (3, 5))
    (row,) = outcomes.read(copy / outcomes.FILE)
    assert row["feedback"] == "number 1: 3 is right. … number 2: not yet: 4 is too low."


def test_what_the_command_writes_by_default_in_a_clone_git_ignores():
    """Run from the clone's root, class-report writes the report and the form beside it: both git-ignored."""
    root = pathlib.Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    csv = next(a.default for a in cli.parser()._subparsers._group_actions[0].choices["class-report"]._actions
               if a.dest == "csv")
    for name in (csv, report.form_file(csv)):
        done = subprocess.run(["git", "check-ignore", "-q", str(name)], cwd=root)
        assert done.returncode == 0, f"{name} is not git-ignored"
