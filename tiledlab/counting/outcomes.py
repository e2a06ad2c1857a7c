"""What each exercise check said, for the teacher's `class-report`: `check()` and `predict()` append a line (exercise,
passed, the gist of the feedback on one line, the time, when the kernel started) to tiledlab-outcomes.jsonl in a
working copy (a folder git ignores wholly, as `lab` and `hub` make it), and nowhere else: a check passed as a pass only
under its exercise cell's own rules. Nothing is sent anywhere."""
import contextlib
import datetime
import functools
import io
import itertools
import json
import linecache
import pathlib
import re
import sqlite3
import sys
import types

from ..core import contract
from ..i18n import _

FILE = "tiledlab-outcomes.jsonl"
EXERCISE = re.compile(r"# (?:Exercise|练习) (\d+\.\d+)\b")  # the first line of every exercise cell, in either edition


class _Tee(io.StringIO):
    """Keeps what is printed, and passes it on."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def write(self, text):
        self.out.write(text)
        return super().write(text)

    def flush(self):
        self.out.flush()


def recorded(grader=None, rules=None):
    """Decorate check() or predict(): record what it returned and the gist of what it printed (summary); a pass only
    where `rules(cell, names, args, kwargs)` finds none of the call's rules other than the exercise cell's as handed
    out (a list of (the call's, the cell's); `names` the calling cell's globals)."""
    if grader is None:
        return functools.partial(recorded, rules=rules)

    @functools.wraps(grader)
    def graded(*args, **kwargs):
        said = _Tee(sys.stdout)
        with contextlib.redirect_stdout(said):
            passed = grader(*args, **kwargs)
        exercise, cell, names = calling_exercise(sys._getframe(1))
        handed_out = handouts(series_notebooks()).get(exercise, ())
        kernel = args[0] if args else kwargs.get("kernel")
        if exercise and grader.__name__ == "check" and not _students(kernel):
            print(_("(The kernel checked is tiledlab's, not yours: exercise {exercise} is noted for your teacher "
                    "only when it checks a kernel you wrote.)").format(exercise=exercise))
        # None: predict() before a prediction was written; a cell as handed out is not started, whatever it says
        elif exercise and passed is not None and cell not in handed_out:
            why = _not_own(rules, exercise, handed_out, names, args, kwargs) if passed else None
            if why:
                print(why, file=said)
                passed = False  # nbgrader scores what the check returns: a pass under other rules earns no points
            record(exercise, passed, said.getvalue(), grader=grader.__name__)
        elif exercise and passed is False:
            print(_("(This cell is still as handed out: exercise {exercise} counts as not started, and nothing is "
                    "noted for your teacher. Write your answer in it, then run it again.)").format(exercise=exercise))
        return passed
    return graded


def _not_own(rules, exercise, handed_out, names, args, kwargs):
    """Why a pass of `exercise` is not one under the rules of its cell as `handed_out`, in a line; None where they are
    its own (or where no rules or no cell tell them)."""
    if not (rules and handed_out):
        return None
    try:
        differ = rules(min(handed_out), names, args, kwargs)  # the editions' cells differ in their comments only
    except Exception as error:  # noqa: BLE001  a name the cell needs is missing here: no pass of it can be told
        return _("(Not noted for your teacher as a pass of exercise {exercise}: its cell as handed out could not run "
                 "here to compare its rules ({error}). Run the exercise in its notebook, after the notebook's first "
                 "cell.)").format(exercise=exercise, error=f"{type(error).__name__}: {error}")
    if not differ:
        return None
    yours, theirs = ("; ".join(side) for side in zip(*differ))
    return _("(Not noted for your teacher as a pass of exercise {exercise}: this check ran with {yours}, where the "
             "exercise cell has {theirs}. Run the cell's own check(...) with its definitions and the kernel's "
             "decorators as handed out.)").format(exercise=exercise, yours=yours, theirs=theirs)


def _students(kernel):
    """True for a kernel written in a notebook or a file of one's own, False for a name or tiledlab's own."""
    fn = getattr(getattr(kernel, "code", None), "function", kernel)  # a Kernel (@launch_geometry) keeps its function
    fn = getattr(fn, "py_func", fn)
    return isinstance(fn, types.FunctionType) and not contract.in_library(fn)


def calling_exercise(frame):
    """(exercise, cell source, its globals) of the calling cell (or file) whose comments above its first statement
    name it ("# Exercise 3.3", the first line as handed out; a student may write a comment above it), or
    (None, None, None)."""
    while frame is not None:
        lines = linecache.getlines(frame.f_code.co_filename)
        heading = itertools.takewhile(lambda line: not line.strip() or line.lstrip().startswith("#"), lines)
        found = next(filter(None, map(EXERCISE.match, heading)), None)
        if found:
            return found[1], "".join(lines).strip(), frame.f_globals
        frame = frame.f_back
    return None, None, None


def series_notebooks():
    """notebooks/ of the source checkout the package lives in (beside the package when it is no checkout)."""
    here = pathlib.Path(__file__).resolve()
    checkout = (f for f in here.parents if (f / "notebooks").is_dir() and (f / "pyproject.toml").is_file())
    return next(checkout, here.parents[2]) / "notebooks"


@functools.lru_cache(maxsize=1)
def handouts(folder):
    """{exercise: its cell's sources as handed out, in either edition} of the notebooks in `folder` (and zh/)."""
    found = {}
    for path in sorted(pathlib.Path(folder).glob("*.ipynb")) + sorted(pathlib.Path(folder).glob("zh/*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for source in ("".join(c.get("source", "")).strip() for c in cells if c.get("cell_type") == "code"):
            if EXERCISE.match(source):
                found.setdefault(EXERCISE.match(source)[1], set()).add(source)
    return found


def kernel_started():
    """When this kernel started (IPython's history session), ISO 8601; None outside IPython."""
    try:
        history = get_ipython().history_manager  # noqa: F821 (IPython's builtin)
        return history.get_session_info(history.session_number)[1].astimezone().isoformat(timespec="seconds")
    except (NameError, AttributeError, IndexError, TypeError, sqlite3.Error):
        return None


def summary(said, grader="check"):
    """The gist of a grader's feedback, on one line: predict()'s verdicts without the advice after a wrong one;
    check()'s first line and, where its last is a sentence (the cause it found, not a printed grid), that one."""
    lines = [line.strip() for line in said.strip().splitlines() if line.strip()]
    if grader == "predict":
        return " … ".join(lines[:-1] or lines)
    cause = lines[-1:] if len(lines) > 1 and lines[-1].endswith((".", "。", ".)", "。）")) else []
    return " … ".join(lines[:1] + cause)


def _in_working_copy(folder):
    """True in a working copy of the notebooks, or a folder in one (an assignment nbgrader fetched): the nearest
    .gitignore at or above `folder` holds `*` (git ignores all of it)."""
    for place in (folder, *folder.parents):
        try:
            return "*" in (place / ".gitignore").read_text().split()
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return False
    return False


def record(exercise, passed, said, folder=None, grader="check"):
    """Append an outcome (what `grader` said, as summary() keeps it) to FILE in `folder` (the current one) if a
    working copy; its path, or None if not written."""
    folder = pathlib.Path.cwd() if folder is None else pathlib.Path(folder)
    if not _in_working_copy(folder):
        return None
    line = {"exercise": exercise, "passed": bool(passed), "feedback": summary(said, grader),
            "time": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "started": kernel_started()}
    try:
        with open(folder / FILE, "a", encoding="utf-8") as out:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    except OSError:  # a read-only folder, a full disk: the check's feedback matters more
        return None
    return folder / FILE


def read(path):
    """The outcomes in one file, oldest first; lines that are not an outcome (cut short, edited) are skipped."""
    found = []
    for line in pathlib.Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("exercise"), str) and isinstance(row.get("time"), str):
            found.append(row)
    return found
