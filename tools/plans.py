"""The teacher's guide's minutes and plans: a model of student minutes from the scripted walkthrough
(walkthrough.py) and the class plans built from it, written into docs/teaching.md's generated blocks.

    python -m tools plans    # rewrite docs/teaching.md's tables from the committed walkthrough
"""
import dataclasses
import pathlib
import re
from dataclasses import dataclass

from classroom.series import ROOT, read_notebook
from tiledlab.counting.outcomes import EXERCISE

# --- modelled student minutes: a scripted walkthrough, not observed students ---------------------------

#: Silent reading of English non-fiction by adults: 238 words a minute, the mean of Brysbaert (2019), "How
#: many words do we read per minute? A review and meta-analysis of reading rate", Journal of Memory and
#: Language 109, 104047 (doi:10.1016/j.jml.2019.104047). Applied to markdown and to code alike.
READING_WPM = 238
#: Minutes allowed per exercise, by kind: the author's allowance for a first attempt, not a measurement.
ALLOWANCE_MIN = {"kernel": 15, "prediction": 5}
HEADING = re.compile(r"^#{1,2} (.+)$")
EXERCISE_TEXT = re.compile(r"^\*\*Exercise (\d+\.\d+)\.\*\*")


def _kind(code):
    return "kernel" if "check(" in code else "prediction" if "predict(" in code else "other"


def parts(path):
    """The parts of one notebook, in order: each `#`/`##` section, and each exercise on its own (its
    text and its code cell). One dict each: part, cells (indices), markdown_words, code_words, exercise kind."""
    found, current = {}, None

    def part(name):
        return found.setdefault(name, {"part": name, "cells": [], "markdown_words": 0, "code_words": 0,
                                       "kind": ""})
    for i, cell in enumerate(read_notebook(path).cells):
        if cell.cell_type == "code":
            match = EXERCISE.match(cell.source)
            if match:
                current = part(f"Exercise {match[1]}")
                current["kind"] = _kind(cell.source)
            current = current or part("(before the title)")
            current["cells"].append(i)
            current["code_words"] += len(cell.source.split())
            continue
        for line in cell.source.splitlines():
            heading, exercise = HEADING.match(line), EXERCISE_TEXT.match(line)
            if heading or exercise:
                current = part(heading[1].strip() if heading else f"Exercise {exercise[1]}")
            current = current or part("(before the title)")
            if i not in current["cells"]:
                current["cells"].append(i)
            current["markdown_words"] += len(line.split())
    return list(found.values())


def model(notebook, execution_s):
    """The rows of one notebook for walkthrough.csv: its parts with their reading, execution and
    exercise minutes. `execution_s` maps a code cell's index to the seconds it took to run."""
    rows = []
    for p in parts(notebook):
        reading = (p["markdown_words"] + p["code_words"]) / READING_WPM
        run = sum(execution_s.get(i, 0.0) for i in p["cells"]) / 60
        exercise = ALLOWANCE_MIN.get(p["kind"], 0)
        rows.append({"notebook": pathlib.Path(notebook).stem, "part": p["part"],
                     "cells": " ".join(map(str, p["cells"])), "markdown_words": p["markdown_words"],
                     "code_words": p["code_words"], "execution_s": round(run * 60, 1), "exercise": p["kind"],
                     "reading_min": round(reading, 2), "execution_min": round(run, 2), "exercise_min": exercise,
                     "minutes": round(reading + run + exercise, 2)})
    return rows


# --- class plans, read from the walkthrough -------------------------------------------------------

WALKTHROUGH = "simulator/walkthrough.csv"
ALL = None  # a part that takes every section of its notebook (exercises apart)


@dataclass(frozen=True)
class Part:
    """One part of a plan: a notebook's sections (ALL, or their headings; "Introduction" is the title
    cell and what it teaches) done in class, with the exercises done in class and those set as homework."""
    title: str
    notebook: str
    sections: tuple = ALL
    in_class: tuple = ()
    homework: tuple = ()


SESSION_MIN = 90
PLAN_90 = (
    Part("The argument in one picture", "00_start_here",
         ("Introduction", "The argument in one picture", "What tiling buys, and what it does not"),
         homework=("0.1", "0.2", "0.3")),  # the prerequisites check, set before the first class
    Part("Naive reads: a launch by hand, 2N loads per thread, 2N³ in all", "01_naive_reads",
         ("Introduction", "The kernel", "Launching it by hand", "One thread reads 2N values",
          "Every thread does the same, so every element is fetched N times", "N² threads read 2N³ values",
          "Summary"), in_class=("1.2",), homework=("1.1",)),
    Part("Redundant reads, with the tile stepper", "02_redundant_reads",
         ("Introduction", "The tiled kernel", "Who fetches a11 and b11 in the naive kernel?",
          "The tiled kernel fetches each element once", "Step through the tiles", "Summary"),
         in_class=("2.2", "2.1")),
    Part("One tile step: 2T³ loads become 2T²", "03_one_tile_step",
         ("Introduction", "One tile step, drawn", "Measured for T = 1 … 32", "Summary"),
         in_class=("3.2",), homework=("3.1", "3.3")),
    Part("The whole matrix; discussion: what tiling buys in time (the fair table)", "04_whole_matrix",
         ("Introduction", "The derivation", "Measured over a grid of N and T",
          "Measured timings vs N, and the distance to cuBLAS", "Summary"), in_class=("4.1",), homework=("4.2", "4.3")),
)
THREE_SESSIONS = {
    "Session 1: counting loads": (
        Part("Start here", "00_start_here", homework=("0.1", "0.2", "0.3")),
        Part("Naive reads", "01_naive_reads", in_class=("1.2", "1.1")),
        Part("Redundant reads, with the tile stepper", "02_redundant_reads", in_class=("2.2", "2.1"), homework=("2.3",)),
    ),
    "Session 2: from one tile to the whole matrix": (
        Part("One tile step", "03_one_tile_step", in_class=("3.2", "3.1"), homework=("3.3", "3.4")),
        Part("The whole matrix, and what tiling buys in time", "04_whole_matrix", in_class=("4.1", "4.2"),
             homework=("4.3",)),
    ),
    "Session 3: the kernel line by line, and where the time goes": (
        Part("The tiled kernel, line by line", "05_line_by_line", in_class=("5.2",), homework=("5.1",)),
        Part("Caches, and where the time goes", "06_caches", in_class=("6.2", "6.3"), homework=("6.1", "6.4")),
        Part("Register tiling (self-study)", "07_register_tiling", ("Introduction", "Summary"),
             homework=("7.1", "7.2", "7.3")),
    ),
}


def walkthrough():
    """The committed walkthrough (data/simulator/walkthrough.csv), with 'Introduction' for each title."""
    from tiledlab import data
    table = data.load(WALKTHROUGH)
    title = table["part"].str.match(r"^\d+ · ")
    return table.assign(part=table["part"].where(~title, "Introduction"))


def notebook_minutes(table=None):
    """Modelled minutes per notebook: reading, running, exercises and the total, one row each."""
    table = walkthrough() if table is None else table
    return (table.groupby("notebook", sort=True)[["reading_min", "execution_min", "exercise_min", "minutes"]]
            .sum().reset_index())


def _minutes(table, notebook, parts):
    rows = table[(table["notebook"] == notebook) & table["part"].isin(parts)]
    missing = set(parts) - set(rows["part"])
    if missing:
        raise LookupError(f"{notebook}: no part {sorted(missing)} in {WALKTHROUGH}: run python -m tools.walkthrough")
    return float(rows["minutes"].sum())


def _sections(table, part):
    rows = table[(table["notebook"] == part.notebook) & (table["exercise"].fillna("") == "")]
    return list(rows["part"]) if part.sections is ALL else list(part.sections)


def plan_rows(parts, table=None):
    """One row per part: title, class minutes (its sections and in-class exercises), what it covers,
    the in-class exercises, and the homework (exercises and the sections left out) with its minutes."""
    table = walkthrough() if table is None else table
    rows = []
    for part in parts:
        sections = _sections(table, part)
        rest = [s for s in _sections(table, dataclasses.replace(part, sections=ALL)) if s not in sections]
        homework = [f"Exercise {e}" for e in part.homework]
        rows.append({"part": part.title, "notebook": part.notebook, "sections": sections,
                     "minutes": _minutes(table, part.notebook, sections + [f"Exercise {e}" for e in part.in_class]),
                     "in_class": list(part.in_class), "homework": list(part.homework), "reading_left": rest,
                     "homework_min": _minutes(table, part.notebook, homework + rest)})
    return rows


def _rounded(minutes):
    return f"{minutes:.0f}"


def plan_table(parts, session_min=SESSION_MIN, table=None):
    """A plan as a Markdown table, with its total and the minutes left for questions."""
    rows = plan_rows(parts, table)
    lines = ["| part | minutes | notebook: sections | in class | homework |", "| --- | ---: | --- | --- | --- |"]
    for r in rows:
        left = f"; read: {', '.join(r['reading_left'])}" if r["reading_left"] else ""
        work = ", ".join(r["homework"]) or "none"
        lines.append(f"| {r['part']} | {_rounded(r['minutes'])} | `{r['notebook']}`: {'; '.join(r['sections'])} | "
                     f"{', '.join(r['in_class']) or 'none'} | {work}{left} ({_rounded(r['homework_min'])} min) |")
    total = sum(round(r["minutes"]) for r in rows)
    lines.append(f"| **in class** | **{total}** | | | |")
    lines.append(f"| questions and discussion | {session_min - total} | | | |")
    return "\n".join(lines)


def minutes_table(table=None):
    """Modelled minutes per notebook as a Markdown table."""
    rows = notebook_minutes(table)
    lines = ["| notebook | reading | running the cells | exercises | total |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| `{r.notebook}` | {r.reading_min:.0f} | {r.execution_min:.1f} | {r.exercise_min:.0f} | "
              f"{r.minutes:.0f} |" for r in rows.itertuples()]
    return "\n".join(lines)


HOW = ["method", "machine", "browser", "backend", "numba", "numba_cuda", "numpy", "date"]


def provenance_line(table=None):
    """Where and how the walkthrough was made; each notebook is walked on its own (walkthrough.py merges its
    rows), so where walks differ, each way it was made with the notebooks made so."""
    table = walkthrough() if table is None else table
    walks = table.groupby(HOW, sort=False, dropna=False)["notebook"].unique()
    return "; ".join(
        f"{r['method']}; {r['machine']}, {r['browser']}, {r['backend']} backend, numba {r['numba']}, "
        f"numba-cuda {r['numba_cuda']}, numpy {r['numpy']}, on {r['date']}"
        + (f" ({', '.join(notebooks)})" if len(walks) > 1 else "")
        for r, notebooks in ((dict(zip(HOW, how)), notebooks) for how, notebooks in walks.items()))


def guide_blocks(table=None):
    """{name: Markdown} for each generated block of docs/teaching.md."""
    blocks = {"provenance": f"Made by: {provenance_line(table)}.", "minutes": minutes_table(table),
              "plan-90": plan_table(PLAN_90, table=table)}
    for k, (session, parts) in enumerate(THREE_SESSIONS.items(), 1):
        blocks[f"session-{k}"] = f"**{session}**\n\n{plan_table(parts, table=table)}"
    return blocks


BLOCK = re.compile(r"(<!-- walkthrough:(?P<name>[\w-]+) -->\n)(?:.*?\n)?(<!-- /walkthrough:(?P=name) -->)", re.S)


def guide_text(text, table=None):
    """`text` (docs/teaching.md) with each generated block rewritten from the walkthrough."""
    blocks = guide_blocks(table)
    return BLOCK.sub(lambda m: m[1] + blocks[m["name"]] + "\n" + m[3], text)


def update_guide(path=None):
    """Rewrite the generated blocks of docs/teaching.md from the committed walkthrough; return its path."""
    path = pathlib.Path(path) if path else ROOT / "docs" / "teaching.md"
    path.write_text(guide_text(path.read_text()))
    return path
