"""python -m tools {translate, links, execute, plans, ladder, sass, profile, measure}: the maintainers'
commands, from a clone.

Their exit codes are tiledlab's (tiledlab.cli.EXIT_CODES), and 5 when a notebook's own cell fails
(execute); --help lists them.
"""
import argparse
import pathlib
import sys

from classroom.cli import out_file
from tiledlab import cli
from tiledlab.cli import MISMATCH, OK, Help, Parser, out_folder, run

from .execute import NotebookError
from .measure import cli as measure

NOTEBOOK_FAILED = 5
EPILOG = (cli.EPILOG.replace("from its formula", "from its formula, or translate check found problems")
          + "\n  5  a notebook's own cell failed (execute): the notebook, the cell and the error")


EXIT_CODES = [(NotebookError, None, NOTEBOOK_FAILED, str), *cli.EXIT_CODES]  # one line, exit 5


def _translate(args):
    from . import edition
    if args.action == "fingerprint":
        size = edition.write_fingerprint(args.articles, out_file(args.out, "--out", "seed_runs.txt"))
        print(f"wrote {args.out} ({size} runs)")
        return OK
    root = out_folder(args.root, "--root")
    if args.action == "update":
        print("\n".join(edition.update(root)))
        return OK
    if args.action == "build":
        english = edition.build(root)
        for line in english:
            print(line, file=sys.stderr)
        print(f"wrote {root / 'notebooks/zh'} and {root / 'docs/zh'} ({len(english)} messages left in English)")
        return OK
    problems = edition.check(root)
    print("\n".join(problems) if problems else "the Chinese edition is up to date")
    return MISMATCH if problems else OK


def _links(args):
    from . import edition, links
    repo, version, changed = links.links(args.repo)
    print(f"{repo} at v{version}: rewrote {', '.join(changed) if changed else 'nothing (all agree)'}")
    if changed and (links.CHECKOUT / "notebooks" / "zh").is_dir():  # its notebooks copy the two cells
        edition.build(links.CHECKOUT)
        print("rebuilt notebooks/zh/ (python -m tools translate build)")
    return OK


def _execute(args):
    from tiledlab.data import write_rows

    from . import execute
    times = out_file(args.times, "--times", "times.csv") if args.times else None
    rows = execute.run(execute.notebooks(args.notebooks), inplace=args.inplace)
    if times:
        times.parent.mkdir(parents=True, exist_ok=True)
        write_rows(rows, times)
        print(f"wrote {times}")
    return OK


def _plans(args):
    from . import plans
    print(f"rewrote the tables of {plans.update_guide(args.guide)}")
    return OK


HANDLERS = {"translate": _translate, "links": _links, "execute": _execute, "plans": _plans, **measure.HANDLERS}


def _translate_options(sub):
    p = sub.add_parser("translate", help="the Chinese edition: update catalogs, build notebooks/zh/, check",
                       formatter_class=Help, description="The Chinese edition, made from the English "
                       "notebooks and docs pages and the catalogs in locale/zh_CN/LC_MESSAGES/.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (("update", "refresh the catalogs from the English (new messages untranslated, changed "
                                  "ones fuzzy)"),
                       ("build", "write notebooks/zh/ and docs/zh/ from them (English where a translation is "
                                 "missing, reported)"),
                       ("check", "list what is out of date, untranslated, fuzzy or copied; exit 1 if anything is")):
        a = actions.add_parser(name, help=text, description=text, formatter_class=Help)
        a.add_argument("--root", default=".", help="the repository's root folder")
    a = actions.add_parser("fingerprint", formatter_class=Help,
                           help="write the source articles' fingerprint for the own-words check")
    a.add_argument("articles", nargs="+", help="the source articles' text files")
    a.add_argument("--out", default="tests/data/seed_runs.txt", help="the file to write")


def _links_options(sub):
    p = sub.add_parser("links", help="write each notebook's Run-it-online cell and Colab install cell",
                       formatter_class=Help, description="Write, after each notebook's title, the cell "
                       "that says how to run it online and the cell that installs tiledlab on Colab, from "
                       "pyproject.toml's Repository URL and version (run it from a clone).")
    p.add_argument("--repo", help="first set the GitHub repository (owner/name) in pyproject.toml")


def _execute_options(sub):
    p = sub.add_parser("execute", help="run the notebooks top to bottom and time each", formatter_class=Help,
                       description="Execute notebooks in fresh kernels (all of notebooks/ by default), "
                                   "optionally saving their outputs in place and their times as CSV.")
    p.add_argument("notebooks", nargs="*", help="notebook files (default: the whole series, in order)")
    p.add_argument("--inplace", action="store_true", help="save the outputs into the notebooks")
    p.add_argument("--times", help="write the minutes per notebook to this CSV file")


def _plans_options(sub):
    p = sub.add_parser("plans", help="rewrite the teacher's guide's minutes and plans from the walkthrough",
                       formatter_class=Help, description="Rewrite the generated blocks of the teacher's "
                       "guide (minutes per notebook, the class plans) from the committed walkthrough "
                       "(tiledlab/data/simulator/walkthrough.csv; python -m tools.walkthrough remakes it).")
    p.add_argument("--guide", default=None, help="the guide to rewrite (default: docs/teaching.md)")


def parser():
    top = Parser(prog="python -m tools", description=__doc__.split("\n\n")[0], epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for options in (_translate_options, _links_options, _execute_options, _plans_options, *measure.OPTIONS):
        options(sub)
    return top


def _parse(argv):
    args = parser().parse_args(argv)
    return args.command, args


def main(argv=None):
    return run(sys.argv[1:] if argv is None else list(argv), _parse, HANDLERS, EXIT_CODES)

