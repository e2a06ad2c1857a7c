"""`python -m classroom class-report CLASS_DIR`: who passed which exercise, from what each student's
check() and predict() recorded in their working copy (tiledlab.counting.outcomes), and their minutes
per notebook.

One row per student (each folder of the class folder `hub` makes that holds a notebooks/ folder, but the
hub's admins': the teacher's login gives them one too), one column per exercise: "passed" once an attempt
passed, "not yet" after failed ones only, blank if never run; notebook 0's questions (exercises 0.N) also
as one "prerequisites" column, once a student ran one.
A notebook's minutes add up, over its kernel's sessions, the time from the kernel's start (opening the
notebook, or restarting its kernel) to the last check in that session.

The outcomes files are the students' own, and a student can edit theirs: each line is trusted only once
every field is what `outcomes.record` writes (`"passed": "false"`, a string, is not a verdict; a check
in the future, a kernel started after its check, a feedback of two lines are not either); a line that is not
is skipped and named, and a file that is not a regular file (a FIFO, a link) is never opened, nor a student's
notebooks/ that is a link (to another student's).
"""
import contextlib
import datetime
import json
import os
import pathlib
import re
import stat

import pandas as pd

from tiledlab.counting import outcomes
from tiledlab.notebook.lab import LANGUAGES

from .hub import NOTEBOOK_FOLDER, admins
from .series import lessons

PASSED, NOT_YET = "passed", "not yet"
COLUMNS = ["student", "exercise", "passed", "feedback", "time", "started"]
EXERCISE_ID = re.compile(r"\d{1,2}\.\d{1,2}\Z")
PREREQUISITES = "prerequisites"  # notebook 0's questions, 0.1, 0.2, ...: passed of those the series asks
MOST_BYTES = 4 << 20  # a class's outcomes file is kilobytes: a bigger one is not read
SKEW = datetime.timedelta(hours=1)  # a check's time may be this far ahead of the report's clock, no further
#: The form of observed minutes (docs/teaching.md, "Record real minutes"): one row per notebook.
FORM = ["date", "class", "notebook", "part", "students", "minutes_median", "minutes_slowest", "finished",
        "backend", "notes"]


def _when(text):
    """An ISO 8601 time with its zone, as `outcomes.record` writes it; None for anything else."""
    if not isinstance(text, str):
        return None
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def problem(row):
    """Why `row` (one parsed line) is not an outcome this report can trust; None when it is one."""
    if not isinstance(row, dict):
        return "not a JSON object"
    time, started = _when(row.get("time")), _when(row.get("started"))
    now = datetime.datetime.now(datetime.timezone.utc)
    checks = [("exercise", isinstance(row.get("exercise"), str) and EXERCISE_ID.match(row["exercise"]),
               "an exercise number like 3.1"),
              ("passed", isinstance(row.get("passed"), bool), "true or false"),
              ("feedback", isinstance(row.get("feedback", ""), str) and len(row.get("feedback", "").splitlines()) < 2,
               "a text of one line"),
              ("time", time and time <= now + SKEW, "a time with its zone, not in the future"),
              ("started", row.get("started") is None or started and time and started <= time,
               "a time with its zone before the check's, or null")]
    for field, ok, want in checks:
        if not ok:
            return f"{field!r} is {json.dumps(row.get(field), ensure_ascii=False)[:40]}, not {want}"
    return None


def read(path):
    """The outcomes of one file that can be trusted, and a line for each thing skipped (file, line, why)."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        kind = "a link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        return [], [f"{path}: {kind}, not read"]
    if info.st_size > MOST_BYTES:
        return [], [f"{path}: {info.st_size:,} bytes, more than an outcomes file holds; not read"]
    rows, skipped = [], []
    with open(path, "rb") as f:
        text = f.read(MOST_BYTES).decode("utf-8", errors="replace")
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        why = "not JSON" if row is None else problem(row)
        if why:
            skipped.append(f"{path}, line {k}: {why}; skipped")
        else:
            rows.append({"feedback": "", "started": None, **{c: row.get(c) for c in COLUMNS[1:] if c in row}})
    return rows, skipped


def _working_copies(class_dir):
    """Every folder of `class_dir` that holds a working copy (notebooks/), by name."""
    folder = pathlib.Path(class_dir)
    if not str(class_dir).strip() or not folder.is_dir():  # "": not the current folder
        raise ValueError(f"CLASS_DIR {folder}: no such folder; give the class folder that `python -m classroom "
                         "hub` made (my-class/ beside notebooks/ unless --class-dir said otherwise)")
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and (p / NOTEBOOK_FOLDER).is_dir())


def teachers(class_dir):
    """The hub's admins (hub.admins) who have a working copy in `class_dir`: not students, left out."""
    admin = admins(class_dir)
    return [home.name for home in _working_copies(class_dir) if home.name in admin]


def homes(class_dir):
    """The students' folders of `class_dir`, by name: every working copy but the hub's admins'."""
    admin = admins(class_dir)
    return [home for home in _working_copies(class_dir) if home.name not in admin]


def outcome_files(copy):
    """The outcomes files of a working copy: its notebooks' and each other edition's (zh/); not those of an
    nbgrader assignment fetched into it (<assignment>/), which nbgrader grades (docs/teaching.md)."""
    editions = (copy, *(copy / lang for lang in LANGUAGES[1:]))
    return sorted(path for folder in editions for path in folder.glob(outcomes.FILE))


def records(class_dir, skipped=None):
    """Every outcome recorded in the class, one row each, with its student and notebook ("03"); what could
    not be trusted is appended to `skipped` (a list), one line each."""
    rows = []
    for home in homes(class_dir):
        link = next((p for p in (home, home / NOTEBOOK_FOLDER) if p.is_symlink()), None)
        if link:  # to another student's work, maybe
            if skipped is not None:
                skipped.append(f"{link}: a link, not read")
            continue
        for path in outcome_files(home / NOTEBOOK_FOLDER):
            found, why = read(path)
            rows += [{"student": home.name, **row} for row in found]
            if skipped is not None:
                skipped += why
    table = pd.DataFrame(rows, columns=COLUMNS)
    for column in ("time", "started"):
        table[column] = pd.to_datetime(table[column], utc=True, format="ISO8601")
    return table.assign(notebook=table["exercise"].str.split(".").str[0].str.zfill(2),
                        passed=table["passed"].astype(bool))


def minutes(table):
    """Minutes per student (rows) and notebook (columns): each kernel session from its start (without
    one, the notebook's first check) to its last check, summed over sessions."""
    first = table.groupby(["student", "notebook"])["time"].transform("min")
    sessions = table.assign(started=table["started"].fillna(first)).groupby(["student", "notebook", "started"])
    spent = sessions["time"].max().reset_index()
    spent["minutes"] = ((spent["time"] - spent["started"]).dt.total_seconds() / 60).clip(lower=0)
    return spent.pivot_table(index="student", columns="notebook", values="minutes", aggfunc="sum")


def _order(exercise):
    return tuple(int(n) for n in exercise.split("."))


def asked(folder=None):
    """The exercises each notebook of the series asks, by its number: {"01": ["1.1", "1.2"], ...}, and its name."""
    found = {}
    for path in lessons(folder) if folder else lessons():
        numbers = set(re.findall(r"# Exercise (\d+\.\d+)\b", path.read_text(encoding="utf-8")))
        found[path.name[:2]] = (path.stem, sorted(numbers, key=_order))
    return found


def prerequisites(verdicts, questions):
    """Per student, how many of notebook 0's `questions` they passed: "2/3"; None if they ran none."""
    mine = verdicts.reindex(columns=questions)
    done = (mine == PASSED).sum(axis=1).astype(str) + f"/{len(questions)}"
    return done.where(mine.notna().any(axis=1))


def report(class_dir, skipped=None, series=None):
    """The class as a DataFrame: one row per student; notebook 0's questions in one column, each exercise's
    verdict, then minutes per notebook ("minutes 03") and in all. `series`: what each notebook asks
    (default: asked()); what could not be trusted goes to `skipped` (see records)."""
    students = [home.name for home in homes(class_dir)]
    table = records(class_dir, skipped)
    if table.empty:
        return pd.DataFrame(index=pd.Index(students, name="student"))
    verdicts = table.groupby(["student", "exercise"])["passed"].any().map({True: PASSED, False: NOT_YET}).unstack()
    verdicts = verdicts[sorted(verdicts.columns, key=_order)]
    questions = (asked() if series is None else series).get("00", ("", []))[1]
    if set(questions) & set(verdicts.columns):  # like an exercise's column: once a student ran one of them
        verdicts.insert(0, PREREQUISITES, prerequisites(verdicts, questions))
    spent = minutes(table)
    spent = spent.set_axis([f"minutes {nb}" for nb in spent.columns], axis=1).assign(minutes=spent.sum(axis=1))
    frame = verdicts.join(spent.round().astype("Int64"))
    return frame.reindex(pd.Index(students, name="student"))


def not_yet(class_dir):
    """Each exercise a student ran but has not passed, with the first line of its last feedback."""
    table = records(class_dir)
    done = table.groupby(["student", "exercise"])["passed"].transform("any")
    last = table[~done].sort_values("time").groupby(["student", "exercise"]).tail(1)
    return last.sort_values(["student", "exercise"], key=lambda c: c.map(_order) if c.name == "exercise" else c)


def observed(class_dir, frame, series=None):
    """The form of observed minutes, filled from the report: one row per notebook the class checked in
    (the day of its last check, the students with minutes, their median and slowest, how many passed every
    exercise the notebook asks); `backend` and `notes` are the teacher's to fill."""
    series = asked() if series is None else series
    table, rows = records(class_dir), []
    for column in [c for c in frame.columns if c.startswith("minutes ")]:
        nb = column.split()[1]
        stem, exercises = series.get(nb, (nb, []))
        exercises = exercises or [c for c in frame.columns if c.split(".")[0].zfill(2) == nb]  # not in the series
        spent = frame[column].dropna()
        passed = frame.reindex(columns=exercises).eq(PASSED).all(axis=1)
        rows.append({"date": table.loc[table["notebook"] == nb, "time"].max().date().isoformat(),
                     "class": pathlib.Path(class_dir).resolve().name, "notebook": stem, "part": "",
                     "students": len(spent), "minutes_median": round(spent.median()),
                     "minutes_slowest": int(spent.max()), "finished": int(passed.sum()), "backend": "",
                     "notes": ""})
    return pd.DataFrame(rows, columns=FORM)


def _footer(frame, exercises):
    """The class's passes per exercise and median minutes per notebook, as two rows under the table."""
    passes = {c: f"{(frame[c] == PASSED).sum()}/{len(frame)}" for c in exercises if c != PREREQUISITES}
    if PREREQUISITES in frame:  # everyone who passed all of notebook 0's questions
        whole = frame[PREREQUISITES].dropna()
        passes[PREREQUISITES] = f"{(whole.str.split('/').str[0] == whole.str.split('/').str[1]).sum()}/{len(frame)}"
    return pd.DataFrame([passes, {c: f"{m:.0f}" for c, m in frame.drop(columns=exercises).median().dropna().items()}],
                        index=["passed", "median"])


def form_file(csv):
    """Where write() puts the form of observed minutes: beside `csv`, as <csv's stem>-minutes.csv."""
    return pathlib.Path(csv).with_name(pathlib.Path(csv).stem + "-minutes.csv")


def _private(path):
    """Each student's results are the teacher's alone (mode 600): with system users the students can read the
    clone, where the report is written. A device (/dev/stdout) or another account's file keeps its mode."""
    if pathlib.Path(path).is_file():
        with contextlib.suppress(PermissionError):
            pathlib.Path(path).chmod(0o600)


def write(class_dir, csv):
    """Write the report as CSV (one row per student) and the form of observed minutes beside it
    (<csv>-minutes.csv), and return the report as text, with the class's passes per exercise and median
    minutes per notebook under it, then who has not passed what yet and what was skipped."""
    skipped = []
    frame = report(class_dir, skipped)
    told = ["", "skipped (not an outcome this report can trust):", *[f"  {line}" for line in skipped]] if skipped else []
    if left := teachers(class_dir):  # their login made them a working copy too
        told = ["", f"left out, the hub's admin (not a student): {', '.join(left)}", *told]
    if frame.index.empty:
        one = (pathlib.Path(class_dir) / NOTEBOOK_FOLDER).is_dir()  # a student's own folder, not the class's
        return "\n".join([f"no students in {class_dir}: a student's folder there holds {NOTEBOOK_FOLDER}/ (the class "
                          "server makes it at their first login); nothing written" + (
                              f". {class_dir} is one student's folder: give the class folder that holds it, "
                              f"{pathlib.Path(class_dir).resolve().parent}" if one else ""), *told])
    pathlib.Path(csv).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(csv, na_rep="")
    _private(csv)
    if frame.columns.empty:  # the start of a lesson: logged in, no exercise checked yet
        return "\n".join([f"{len(frame)} students ({', '.join(frame.index)}), none has checked an exercise yet: each "
                          f"check() writes to {NOTEBOOK_FOLDER}/{outcomes.FILE} in the student's folder", *told,
                          "", f"wrote {csv} (their names only)"])
    exercises = [c for c in frame.columns if not c.startswith("minutes")]
    shown = pd.concat([frame.astype(object), _footer(frame, exercises)])
    lines = [shown.where(shown.notna(), "").to_string()]
    stuck = not_yet(class_dir)
    if len(stuck):
        lines += ["", "not passed yet (the last feedback):"]
        lines += [f"  {r.student}, {r.exercise}: {r.feedback}" for r in stuck.itertuples()]
    if not pathlib.Path(csv).is_file():  # a device (/dev/null, /dev/stdout): no form written beside it, in /dev
        return "\n".join(lines + told + ["", f"wrote {csv}; {csv} is not a file, so the form of observed minutes "
                                         "was not written beside it: give --csv a file's name for it"])
    form = form_file(csv)
    observed(class_dir, frame).to_csv(form, index=False)
    return "\n".join(lines + told + ["", f"wrote {csv}", f"wrote {form}: the form of observed minutes, one row per "
                                     "notebook (docs/teaching.md, \"Record real minutes\"): add the backend and your notes"])
