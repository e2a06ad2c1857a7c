"""`python -m classroom class-report CLASS_DIR`: who passed which exercise, from what each student's
check() and predict() recorded in their working copy (tiledlab.counting.outcomes), and their minutes
per notebook.

One row per student (each folder of the class folder `hub` makes that holds a notebooks/ folder), one
column per exercise: "passed" once an attempt passed, "not yet" after failed ones only, blank if never
run. A notebook's minutes add up, over its kernel's sessions, the time from the kernel's start (opening
the notebook, or restarting its kernel) to the last check in that session.
"""
import pathlib

import pandas as pd

from tiledlab.counting import outcomes

from .hub import NOTEBOOK_FOLDER

PASSED, NOT_YET = "passed", "not yet"
COLUMNS = ["student", "exercise", "passed", "feedback", "time", "started"]


def homes(class_dir):
    """The students' folders of `class_dir`, by name."""
    folder = pathlib.Path(class_dir)
    if not folder.is_dir():
        raise ValueError(f"CLASS_DIR {folder}: no such folder; give the class folder that `python -m classroom "
                         "hub` made (my-class/ beside notebooks/ unless --class-dir said otherwise)")
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and (p / NOTEBOOK_FOLDER).is_dir())


def records(class_dir):
    """Every outcome recorded in the class, one row each, with its student and notebook ("03")."""
    rows = [{"student": home.name, **row} for home in homes(class_dir)
            for path in sorted((home / NOTEBOOK_FOLDER).rglob(outcomes.FILE)) for row in outcomes.read(path)]
    table = pd.DataFrame(rows, columns=COLUMNS)
    for column in ("time", "started"):
        table[column] = pd.to_datetime(table[column], utc=True, errors="coerce", format="ISO8601")
    table = table.dropna(subset=["time"])
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


def report(class_dir):
    """The class as a DataFrame: one row per student; each exercise's verdict, then minutes per notebook
    ("minutes 03") and in all."""
    students = [home.name for home in homes(class_dir)]
    table = records(class_dir)
    if table.empty:
        return pd.DataFrame(index=pd.Index(students, name="student"))
    verdicts = table.groupby(["student", "exercise"])["passed"].any().map({True: PASSED, False: NOT_YET}).unstack()
    spent = minutes(table)
    spent = spent.set_axis([f"minutes {nb}" for nb in spent.columns], axis=1).assign(minutes=spent.sum(axis=1))
    frame = verdicts[sorted(verdicts.columns, key=_order)].join(spent.round().astype("Int64"))
    return frame.reindex(pd.Index(students, name="student"))


def not_yet(class_dir):
    """Each exercise a student ran but has not passed, with the first line of its last feedback."""
    table = records(class_dir)
    done = table.groupby(["student", "exercise"])["passed"].transform("any")
    last = table[~done].sort_values("time").groupby(["student", "exercise"]).tail(1)
    return last.sort_values(["student", "exercise"], key=lambda c: c.map(_order) if c.name == "exercise" else c)


def write(class_dir, csv):
    """Write the report as CSV (one row per student) and return it as text, with the class's passes per
    exercise and median minutes per notebook under it, then who has not passed what yet."""
    frame = report(class_dir)
    if frame.index.empty:
        return (f"no students in {class_dir}: a student's folder there holds {NOTEBOOK_FOLDER}/ (the class server "
                f"makes it at their first login); nothing written")
    pathlib.Path(csv).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(csv, na_rep="")
    if frame.columns.empty:  # the start of a lesson: logged in, no exercise checked yet
        return (f"{len(frame)} students ({', '.join(frame.index)}), none has checked an exercise yet: each check() "
                f"writes to {NOTEBOOK_FOLDER}/{outcomes.FILE} in the student's folder\n\nwrote {csv} (their names only)")
    exercises = [c for c in frame.columns if not c.startswith("minutes")]
    footer = pd.DataFrame([{c: f"{(frame[c] == PASSED).sum()}/{len(frame)}" for c in exercises},
                           {c: f"{m:.0f}" for c, m in frame.drop(columns=exercises).median().dropna().items()}],
                          index=["passed", "median"])
    shown = pd.concat([frame.astype(object), footer])
    lines = [shown.where(shown.notna(), "").to_string()]
    stuck = not_yet(class_dir)
    if len(stuck):
        lines += ["", "not passed yet (the last feedback):"]
        lines += [f"  {r.student}, {r.exercise}: {r.feedback}" for r in stuck.itertuples()]
    return "\n".join(lines + ["", f"wrote {csv}"])
