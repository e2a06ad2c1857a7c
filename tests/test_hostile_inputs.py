"""Careless input to the newer surfaces: `best`, profile's options, translate, lab, hub, links, i18n.

Each must be refused with a ValueError (or, on the command line, one `tiledlab: error:` line and exit 2)
that says what to fix, before a kernel is launched, a GPU or tool is looked for, or a file is written.
All on the simulator, in this process.
"""
import os
import pathlib
import threading

import nbformat
import numpy as np
import pytest

from classroom import cli as classroom_cli
from classroom import series
from tiledlab import cli, i18n
from tools import cli as tools_cli
from tools import edition, links
from tiledlab.core import launch
from tiledlab.core.launch import matmul, prepare
from tiledlab.core import best, card
from conftest import needs_jupyterlab
from tools.edition import catalogs, sources

F32 = np.float32


def refused(code, capsys, *words):
    """Exit 2 with one `tiledlab: error:` line on stderr naming every one of `words`."""
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("tiledlab: error: "), (code, err)
    assert all(w in err[0] for w in words), err[0]
    return err[0]


@pytest.fixture
def never_launched(monkeypatch):
    """Fail the test if anything is put on the device (prepare's last step before a launch)."""
    def refuse(*args, **kwargs):
        raise AssertionError("an operand reached the device")
    monkeypatch.setattr(launch.cuda, "to_device", refuse)


# --- matmul(A, B, "best") and best.choose ------------------------------------------------------------

@pytest.mark.parametrize("M, N", [(0, 64), (64, -1), (2.5, 64), ("64", 64), (True, 64), (float("nan"), 64)])
def test_best_refuses_a_shape_that_is_not_whole_and_positive(M, N):
    with pytest.raises(ValueError, match="whole number of at least 1"):
        best.choose(M, 64, N)


def test_best_takes_numpy_integers():
    assert best.choose(np.int64(8192), np.int32(64), np.int64(8192)) == best.choose(8192, 64, 8192)


@pytest.mark.parametrize("value", ["", "gtx1080", "T4 "])
def test_an_unknown_modelled_card_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv(card.ENV, value)
    if value.strip().lower() in ("", "t4"):
        assert card.modelled().name in ("NVIDIA H200", "Tesla T4")
        return
    with pytest.raises(ValueError, match="TILEDLAB_CARD='gtx1080': the simulator models one of t4, a100"):
        card.modelled()


@pytest.mark.parametrize("A, B, says", [
    ([[1.0]], np.ones((1, 1), F32), "A must be a numpy array"),
    (np.ones((2, 4, 4), F32), np.ones((2, 4, 4), F32), "2-D"),
    (np.ones(4, F32), np.ones(4, F32), "2-D"),
])
def test_best_with_a_tile_blames_the_operands_first(A, B, says, never_launched):
    # the kernel "best" runs depends on the operands' shape: they are checked before its constants
    with pytest.raises(ValueError, match=says):
        prepare("best", A, B, tile=8)


def test_best_with_a_tile_says_that_best_chose_a_kernel_without_one(never_launched):
    with pytest.raises(ValueError, match='"best" runs .* at this shape: .* has no tile width T'):
        matmul(np.ones((4, 4), F32), np.ones((4, 4), F32), "best", tile=8)


@pytest.mark.parametrize("A, B, says", [
    (np.ones((4, 4)), np.ones((4, 4), F32), "float32"),
    (np.ones((0, 4), F32), np.ones((4, 4), F32), "empty"),
    (np.ones((4, 3), F32), np.ones((4, 4), F32), "A's columns"),
    (np.ones((4, 4), F32), [[1.0] * 4] * 4, "B must be a numpy array"),
])
def test_bad_operands_to_best_are_refused_before_launch(A, B, says, never_launched):
    with pytest.raises(ValueError, match=says):
        matmul(A, B, "best")


@pytest.mark.parametrize("M, K, N", [(1, 1, 1), (1, 3, 130), (65, 2, 1)])
def test_best_is_right_on_thin_shapes(M, K, N):
    rng = np.random.default_rng(M + K + N)
    A, B = rng.standard_normal((M, K), dtype=F32), rng.standard_normal((K, N), dtype=F32)
    np.testing.assert_allclose(matmul(A, B, "best"), A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


# --- profile: options checked before ncu or a GPU is looked for ----------------------------------

@pytest.mark.parametrize("argv, words", [
    (["--kernels", "best"], ["--kernels best", "--kernels-n"]),
    (["--kernels-n", "64"], ["--kernels-n 64", "--kernels NAME"]),
    (["--kernels", "no_such_kernel", "--kernels-n", "64"], ["no_such_kernel"]),
    (["--tile", "0"], ["1 to 32", "got 0"]),
    (["--triton-n", "0"], ["--triton-n", "at least 1"]),
    (["--kernels-n", "-1"], ["--kernels-n", "at least 1"]),
])
def test_profile_refuses_options_that_would_profile_nothing_or_fail_late(argv, words, tmp_path, capsys):
    out = tmp_path / "profile-out"
    refused(tools_cli.main(["profile", *argv, "--out", str(out)]), capsys, *words)
    assert not out.exists()


# --- translate ------------------------------------------------------------------------------------

TABLE = "| N | loads |\n| --- | --- |\n| 16 | 8192 |\n| 32 | 65536 |"
ZH_TABLE = "| N | 加载次数 |\n| --- | --- |\n| 16 | 8192 |\n| 32 | 65536 |"


@pytest.fixture
def repo(tmp_path):
    """One English notebook with a table cell, its catalog made and translated."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Loads", id="title"),
                nbformat.v4.new_markdown_cell(TABLE, id="table")]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / "notebooks/01_a.ipynb")
    edition.update(tmp_path)
    set_translations(tmp_path, {"title": "# 加载次数", "table": ZH_TABLE})
    return tmp_path


def catalog_path(root):
    return root / sources.LOCALE / "notebooks/01_a.po"


def set_translations(root, strings):
    catalog = catalogs.read(catalog_path(root))
    for m in catalog:
        if m.context in strings:
            m.string = strings[m.context]
    catalog_path(root).write_bytes(catalogs.text(catalog))


@pytest.mark.parametrize("action", ["update", "build", "check"])
@pytest.mark.parametrize("where", ["missing", "no notebooks"])
def test_translate_without_notebooks_under_root_is_one_line(action, where, tmp_path, capsys):
    root = tmp_path / "root"
    if where == "no notebooks":
        (root / "notebooks").mkdir(parents=True)
    refused(tools_cli.main(["translate", action, "--root", str(root)]), capsys, "no English notebooks", "--root")


@pytest.mark.parametrize("action", ["update", "build", "check"])
@pytest.mark.parametrize("break_it, says", [
    (lambda text: text.replace('msgstr "# 加载次数"', 'msgstr "# 加载次数'), "line "),  # unterminated string
    (lambda text: text.replace('msgstr "# 加载次数"', 'msgstr # 加载次数'), "line "),
    (lambda text: text + 'msgid "dangling"\n', "missing msgstr"),
])
def test_a_malformed_catalog_is_one_line_and_never_rewritten(action, break_it, says, repo, capsys, monkeypatch):
    path = catalog_path(repo)
    path.write_text(break_it(path.read_text(encoding="utf-8")), encoding="utf-8")
    broken = path.read_bytes()
    monkeypatch.chdir(repo)
    line = refused(tools_cli.main(["translate", action]), capsys, "01_a.po", "not a valid catalog", says)
    assert path.read_bytes() == broken, line  # update used to drop the bad message and write the rest back
    assert not (repo / sources.ZH_NOTEBOOKS).exists()


def test_a_catalog_that_is_not_utf8_is_one_line(repo, capsys):
    catalog_path(repo).write_bytes(catalog_path(repo).read_bytes() + b'#  \xff\xfe\n')
    refused(tools_cli.main(["translate", "check", "--root", str(repo)]), capsys, "not UTF-8")


def test_check_reports_a_translation_that_drops_a_table_row(repo):
    assert not [p for p in edition.check(repo, digests=set()) if "01_a.po" in p]  # the faithful translation
    set_translations(repo, {"table": ZH_TABLE.rsplit("\n", 1)[0]})  # the N = 32 row deleted
    problems = [p for p in edition.check(repo, digests=set()) if "01_a.po" in p]
    assert problems == [("locale/zh_CN/LC_MESSAGES/notebooks/01_a.po: table breaks the markdown: the English has "
                         "table of 3 rows × 2 cells, the translation table of 2 rows × 2 cells; keep its tables, "
                         "headings and code")]


def test_check_reports_a_translation_that_drops_a_heading(repo):
    set_translations(repo, {"title": "加载次数"})
    assert any("title breaks the markdown: the English has h1, the translation no table, heading or code" in p
               for p in edition.check(repo, digests=set()))


def test_fingerprint_out_that_is_a_folder_suggests_a_fitting_name(tmp_path, capsys):
    article = tmp_path / "a.txt"
    article.write_text("分块", encoding="utf-8")
    line = refused(tools_cli.main(["translate", "fingerprint", str(article), "--out", str(tmp_path)]), capsys,
                   "is a folder")
    assert "times.csv" not in line and "seed_runs.txt" in line


# --- lab, student-copy, links, hub, slides ---------------------------------------------------------

@pytest.fixture
def english_only(tmp_path):
    src = tmp_path / "notebooks"
    src.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), src / "00_a.ipynb")
    return src


def test_lab_lang_zh_without_the_chinese_edition_says_how_to_build_it(english_only, capsys):
    line = refused(cli.main(["lab", "--lang", "zh", "--src", str(english_only), "--dry-run"]), capsys,
                   "--lang zh", "translate build")
    assert not (english_only.parent / "my-notebooks").exists(), line


@pytest.mark.parametrize("lang", ["xx", "ZH", ""])
def test_lab_unknown_language_is_an_argparse_error(lang, english_only, capsys):
    refused(cli.main(["lab", "--lang", lang, "--src", str(english_only), "--dry-run"]), capsys, "--lang",
            "invalid choice")


def test_student_copy_refuses_a_full_folder_and_a_file(tmp_path, capsys):
    full, a_file = tmp_path / "full", tmp_path / "notes.txt"
    full.mkdir()
    (full / "mine.txt").write_text("keep")
    a_file.write_text("keep")
    refused(classroom_cli.main(["student-copy", str(full)]), capsys, "not an empty folder")
    refused(classroom_cli.main(["student-copy", str(a_file)]), capsys, "is a file")
    refused(classroom_cli.main(["student-copy", str(a_file / "sub")]), capsys, "is a file")
    assert sorted(p.name for p in full.iterdir()) == ["mine.txt"] and a_file.read_text() == "keep"


@pytest.mark.parametrize("repo_name", ["bad repo", "", "a/b/c", "owner/..", "./tiledlab", "owner"])
def test_links_refuses_a_repository_that_is_not_owner_slash_name(repo_name, capsys, monkeypatch):
    written = []
    monkeypatch.setattr(links, "write_online_cells", lambda *a: written.append(a))
    monkeypatch.setattr(pathlib.Path, "write_text", lambda *a, **k: written.append(a))
    refused(tools_cli.main(["links", "--repo", repo_name]), capsys, "--repo", "owner/name")
    assert written == []


@pytest.mark.parametrize("class_dir, says", [("notes.txt", "is a file"), ("notes.txt/sub", "is a file"),
                                             ("", "empty")])
def test_hub_dry_run_refuses_a_class_folder_it_could_not_make(class_dir, says, tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("keep")
    folder = str(tmp_path / class_dir) if class_dir else ""
    refused(classroom_cli.main(["hub", "--dry-run", "--class-dir", folder]), capsys, "--class-dir", says)


def test_hub_dry_run_passes_unknown_options_on(tmp_path, capsys, monkeypatch):
    from classroom import hub
    monkeypatch.setattr(hub, "_check_installed", lambda: None)
    assert classroom_cli.main(["hub", "--dry-run", "--allow-root", "--class-dir", str(tmp_path / "class"), "--port", "8123"]) == 0
    assert capsys.readouterr().out.strip().endswith("--port 8123")


def test_slides_out_into_a_file_is_refused(tmp_path, capsys):
    a_file = tmp_path / "slides.html"
    a_file.write_text("keep")
    refused(classroom_cli.main(["slides", "--out", str(a_file)]), capsys, "--out", "is a file")
    assert a_file.read_text() == "keep"


# --- i18n.language(): never raises, never blocks ---------------------------------------------------

@pytest.mark.parametrize("value, lang", [("ZH", "zh"), ("zh_CN", "zh"), (" zh-Hans ", "zh"), ("", "en"),
                                         ("fr", "en"), ("en_US.UTF-8", "en")])
def test_odd_tiledlab_lang_values(value, lang, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TILEDLAB_LANG", value)
    assert i18n.language() == lang


@pytest.mark.parametrize("content, lang", [(b"\xff\xfe\x00junk", "en"), (b"", "en"), (b"\x00\x00", "en"),
                                           (b" Zh\n", "zh"), (b"en  # not zh\n", "en"), (b"shzh", "en"),
                                           (b"x" * 100 + b" zh", "en")])
def test_a_language_file_with_junk(content, lang, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TILEDLAB_LANG", raising=False)
    (tmp_path / "LANGUAGE").write_bytes(content)
    assert i18n.language() == lang


def test_a_language_folder_or_pipe_is_english_without_blocking(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TILEDLAB_LANG", raising=False)
    (tmp_path / "LANGUAGE").mkdir()
    assert i18n.language() == "en"
    (tmp_path / "LANGUAGE").rmdir()
    os.mkfifo(tmp_path / "LANGUAGE")
    answer = []
    reader = threading.Thread(target=lambda: answer.append(i18n.language()), daemon=True)
    reader.start()
    reader.join(timeout=5)
    if reader.is_alive():  # blocked opening the pipe: give it a writer, so that the thread ends
        os.close(os.open(tmp_path / "LANGUAGE", os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=5)
        pytest.fail("language() blocked on a LANGUAGE pipe")
    assert answer == ["en"]


# --- careless input to the tools: exit 2 (or 5 for a notebook's own failure), one line, nothing written ---

NOT_NOTEBOOKS = {"object": '{"a": 1}', "list": "[1, 2]", "cells not a list": '{"cells": 5, "metadata": {}, '
                 '"nbformat": 4, "nbformat_minor": 5}', "a cell without a type": '{"cells": [{"source": "x"}], '
                 '"metadata": {}, "nbformat": 4, "nbformat_minor": 5}'}


@pytest.fixture(params=NOT_NOTEBOOKS, ids=list(NOT_NOTEBOOKS))
def not_a_notebook(request, tmp_path):
    """A checkout whose one notebook is valid JSON but not a notebook."""
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / "01_a.ipynb"
    path.write_text(NOT_NOTEBOOKS[request.param])
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.0"\n'
                                             '[project.urls]\nRepository = "https://github.com/OWNER/tiledlab"\n')
    return path


@pytest.mark.parametrize("argv", [["execute", "{nb}"], ["translate", "update", "--root", "{root}"],
                                  ["translate", "build", "--root", "{root}"],
                                  ["translate", "check", "--root", "{root}"], ["links"]])
def test_a_json_file_that_is_not_a_notebook_is_bad_input(argv, not_a_notebook, capsys, monkeypatch):
    monkeypatch.setattr(links, "CHECKOUT", not_a_notebook.parents[1])
    before = not_a_notebook.read_bytes()
    argv = [a.format(nb=not_a_notebook, root=not_a_notebook.parents[1]) for a in argv]
    refused(tools_cli.main(argv), capsys, "01_a.ipynb", "not a Jupyter notebook")
    assert not_a_notebook.read_bytes() == before


def test_slides_of_a_json_file_that_is_not_a_notebook_is_bad_input(not_a_notebook):
    from classroom import slides
    with pytest.raises(ValueError, match="01_a.ipynb is not a Jupyter notebook"):
        slides.slides([not_a_notebook], figures={})


def test_a_notebook_whose_own_cell_fails_names_notebook_cell_and_error(tmp_path, capsys):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("text"),
                nbformat.v4.new_code_cell("1 / 0")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "fails.ipynb"
    nbformat.write(nb, path)
    code = tools_cli.main(["execute", "--inplace", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == tools_cli.NOTEBOOK_FAILED == 5 and len(err) == 1, err
    assert all(w in err[0] for w in ("fails.ipynb", "cell 2", "ZeroDivisionError")), err[0]
    assert "5  a notebook's own cell failed" in tools_cli.EPILOG  # documented beside the other codes
    assert "5  " not in cli.EPILOG  # tiledlab runs no notebook


def test_student_copy_into_the_series_itself_is_refused(tmp_path, capsys):
    for inside in ("notebooks/handout", "tiledlab/copy", "notebooks"):
        refused(classroom_cli.main(["student-copy", str(series.ROOT / inside)]), capsys, "inside the series")
    assert not (series.ROOT / "notebooks" / "handout").exists()


def test_bench_has_no_triton_option_it_would_ignore(capsys):
    refused(cli.main(["bench", "--triton"]), capsys, "--triton")


@pytest.fixture
def work(tmp_path):
    """A working copy of the real series in tmp_path/work."""
    from tiledlab.notebook import lab
    return lab.working_copy(lab.SOURCE, tmp_path / "work", say=lambda *a: None)


def test_lab_never_blocks_on_a_pipe_in_the_working_copy(work, capsys):
    (work / "01_naive_reads.ipynb").unlink()
    os.mkfifo(work / "01_naive_reads.ipynb")
    answer = []
    runner = threading.Thread(target=lambda: answer.append(
        cli.main(["lab", "--dest", str(work), "--fresh", "--dry-run"])), daemon=True)
    runner.start()
    runner.join(timeout=30)
    if runner.is_alive():
        os.close(os.open(work / "01_naive_reads.ipynb", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("lab --fresh --dry-run blocked reading a pipe")
    refused(answer[0], capsys, "01_naive_reads.ipynb", "pipe")


@pytest.mark.parametrize("fresh", [[], ["--fresh"]])
def test_lab_never_writes_through_a_link(work, tmp_path, capsys, fresh, monkeypatch):
    from tiledlab.notebook import lab
    monkeypatch.setattr(lab.os, "execve", lambda *a: pytest.fail("JupyterLab started"))
    outside = tmp_path / "outside"
    (work / "01_naive_reads.ipynb").unlink()
    (work / "01_naive_reads.ipynb").symlink_to(outside / "stolen.ipynb")  # dangling
    (work / ".gitignore").unlink()
    (work / ".gitignore").symlink_to(outside / "gitignore")
    refused(cli.main(["lab", "--dest", str(work), *fresh]), capsys, "symbolic link")
    assert not outside.exists()


@pytest.mark.parametrize("dest, lang", [("notebooks/zh", "en"), ("notebooks", "zh"), ("notebooks/zh/x", "en"),
                                        ("notebooks/..", "en"), ("notebooks", "en")])
def test_lab_refuses_a_working_copy_inside_the_committed_notebooks(dest, lang, capsys, monkeypatch):
    from tiledlab.notebook import lab
    monkeypatch.setattr(lab.os, "execve", lambda *a: pytest.fail("JupyterLab started"))
    before = {p: p.stat().st_mtime_ns for p in lab.SOURCE.rglob("*")}
    refused(cli.main(["lab", "--fresh", "--lang", lang, "--dest", str(lab.SOURCE.parent / dest)]), capsys,
            "committed notebooks", "--dest")
    assert {p: p.stat().st_mtime_ns for p in lab.SOURCE.rglob("*")} == before


@pytest.mark.parametrize("extra, words", [(["--port", "abc"], ["--port abc", "int"]),
                                          (["--ServerApp.port_retries=x"], ["port_retries", "int"])])
@needs_jupyterlab
def test_lab_refuses_options_jupyterlab_would_refuse_before_writing(extra, words, tmp_path, capsys, monkeypatch):
    from tiledlab.notebook import lab
    monkeypatch.setattr(lab.os, "execve", lambda *a: pytest.fail("JupyterLab started"))
    refused(cli.main(["lab", "--dest", str(tmp_path / "w"), *extra]), capsys, *words)
    assert not (tmp_path / "w").exists()


def test_lab_lang_zh_says_when_jupyterlabs_menus_stay_english(capsys, monkeypatch, tmp_path):
    from tiledlab.notebook import lab
    monkeypatch.setattr(lab, "has_language_pack", lambda locale="zh_CN": False)
    assert cli.main(["lab", "--lang", "zh", "--dest", str(tmp_path / "w"), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "中文语言包没有安装" in err and "'.[zh]'" in err  # the Chinese edition's notice, in Chinese


def test_fingerprint_into_a_full_device_is_bad_input(tmp_path, capsys):
    article = tmp_path / "a.txt"
    article.write_text("分块", encoding="utf-8")
    refused(tools_cli.main(["translate", "fingerprint", str(article), "--out", "/dev/full"]), capsys,
            "No space left")


def test_translate_without_an_action_names_the_actions(capsys):
    line = refused(tools_cli.main(["translate"]), capsys, "ACTION")
    assert "articles" not in line


# --- the lab's check(), as a student calls it -------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs, says", [
    (("2.1", "KERNEL"), {}, "check() takes your @cuda.jit kernel first"),
    (("KERNEL",), {"tile": "4"}, "tile must be a whole number from 1 to 32, got '4'"),
    (("KERNEL",), {"tile": -2}, "tile must be a whole number from 1 to 32, got -2"),
    (("KERNEL",), {"tile": 0}, "tile must be a whole number from 1 to 32, got 0"),
    ((print,), {}, "is not a kernel: decorate a function of (A, B, C) with @cuda.jit"),
])
def test_check_with_wrong_arguments_says_what_to_fix_and_launches_nothing(args, kwargs, says, never_launched, capsys):
    from tiledlab.counting.exercises import check
    from tiledlab.core.kernels import tiled
    args = tuple(tiled if a == "KERNEL" else a for a in args)
    assert check(*args, **kwargs) is False
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and says in out[0], out
