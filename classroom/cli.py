"""python -m classroom {slides, student-copy, hub, class-report, nbgrader}: teaching a class from a clone.

One handler per command (HANDLERS) and its options (parser()); the exit codes are tiledlab's
(tiledlab.cli.EXIT_CODES, listed by --help).
"""
import argparse
import importlib.util
import pathlib
import shlex
import sys

from tiledlab.cli import EPILOG, OK, Parser, add_command, file_in_the_way, out_folder, run
from tiledlab.experiments import Unavailable


def out_file(path, option, example):
    """`path` as a file to write, or a ValueError saying why it cannot be (`example`: a name to suggest).
    The maintainers' tools use it too."""
    path = pathlib.Path(path)
    if path.is_dir():
        raise ValueError(f"{option} {path} is a folder: give a file's name, e.g. {option} {path / example}")
    if path.is_fifo():  # opened to write, it waits for a reader: forever
        raise ValueError(f"{option} {path} is a pipe, not a file: give a file's name, e.g. {option} {example}")
    if blocker := file_in_the_way(path.parent):
        raise ValueError(f"{option} {path}: {blocker} is a file, not a folder")
    return path


def _slides(args):
    if importlib.util.find_spec("markdown_it") is None:
        raise Unavailable("the slides are written with markdown-it-py: pip install -e '.[teach]'")
    import matplotlib
    matplotlib.use("Agg")  # the takeaway figures are drawn off screen
    from . import slides
    print(f"wrote {slides.write(out_folder(args.out))}")
    return OK


def _student_copy(args):
    from .student_copy import student_copy
    path = student_copy(out_folder(args.dir, "DIR"))
    print(f"wrote a student copy of the series to {path} (without the key or the tests): "
          f"cd {shlex.quote(str(path))} && python3 -m venv .venv && .venv/bin/python -m pip install -e . && "
          ".venv/bin/python -m tiledlab lab")
    return OK


def _hub(argv):
    """`hub` parses its own options (hub.py); the others go on to `jupyterhub`."""
    from tiledlab.notebook import lab

    from . import hub
    return hub.start(*lab.parse(hub.parser(Parser), argv))


def _nbgrader(args):
    from . import grading, hub
    dest = out_folder(args.dir, "DIR")
    exchange = hub.class_folder(args.class_dir) / hub.EXCHANGE_FOLDER
    written = grading.course(dest, args.lang, args.notebooks or None, exchange)
    nbgrader = shlex.quote(str(pathlib.Path(sys.executable).with_name("nbgrader")))
    print(f"wrote an nbgrader course to {dest}: {len(written)} assignments ({', '.join(written)}), each "
          f"notebook's exercises graded by its own check() and predict(); its exchange, the class server's: "
          f"{exchange}. Then, in {shlex.quote(str(dest))}: {nbgrader} generate_assignment {written[0]} (and the "
          f"others), release_assignment, collect, autograde, generate_feedback, release_feedback "
          f"(docs/teaching.md, \"Grading with nbgrader\")")
    return OK


def _class_report(args):
    from . import report
    print(report.write(args.class_dir, out_file(args.csv, "--csv", "class-report.csv")))
    return OK


HANDLERS = {"slides": _slides, "student-copy": _student_copy, "hub": _hub, "class-report": _class_report,
            "nbgrader": _nbgrader}


def parser():
    top = Parser(prog="python -m classroom", description=__doc__.split("\n\n")[0], epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_command(sub, "slides", "one offline HTML slide deck built from the notebooks", "Build one self-contained HTML "
             "slide deck (no network; arrow keys; S: presenter view with speaker notes; printable) from the "
             "notebooks: what each teaches, its kernel's key lines, its figure, its predictions with their "
             "answers, its summary: DIR/slides.html.").add_argument("--out", default="slides",
                                                                   help="folder for slides.html")
    add_command(sub, "student-copy", "a copy of the series for students: no solutions/, no tests", "Copy the "
             "package, the notebooks, the README, the environment files and the licences into DIR (new, or "
             "empty), leaving out the key (solutions/), the tests that run it and the teacher's guide."
             ).add_argument("dir", metavar="DIR", help="the folder to write the copy into")
    sub.add_parser("hub", help="a JupyterHub class server: each student gets their own working copy of "
                               "notebooks/; `hub --help` for its options")
    p = add_command(sub, "nbgrader", "an nbgrader course from the series: the key in solution regions, checks as "
                 "graded tests", "Write an nbgrader course into DIR (new, or empty): nbgrader_config.py and "
                 "source/<notebook>/ for each notebook with exercises, each exercise's cell with the key in a "
                 "solution region and its check() or predict() in a read-only test cell with its points.")
    p.add_argument("dir", metavar="DIR", help="the folder to write the course into")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="the edition: en, or zh (中文版)")
    p.add_argument("--notebooks", nargs="+", metavar="STEM", help="only these notebooks (e.g. 01_naive_reads)")
    p.add_argument("--class-dir", default=None, help="the class folder of the hub whose students fetch and submit "
                   "(default: my-class/ beside notebooks/, or $TILEDLAB_CLASS_DIR): its exchange, .exchange/")
    p = add_command(sub, "class-report", "who passed which exercise: one row per student of a class folder",
                 "Tabulate the outcomes each student's check() and predict() recorded in their working copy: one "
                 "row per student, one column per exercise, and minutes per notebook; print it and write it as CSV.")
    p.add_argument("class_dir", metavar="CLASS_DIR", help="the class folder `hub` made (default there: my-class/)")
    p.add_argument("--csv", default="class-report.csv", help="the CSV file to write")
    return top


def _parse(argv):
    if argv[:1] == ["hub"]:  # before argparse: unknown options go on to `jupyterhub`
        return "hub", argv[1:]
    args = parser().parse_args(argv)
    return args.command, args


def main(argv=None):
    return run(sys.argv[1:] if argv is None else list(argv), _parse, HANDLERS)
