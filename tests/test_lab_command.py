"""`python -m tiledlab lab`: a git-ignored working copy, and --allow-root as root (no browser needed)."""
import json
import os
import pathlib
import threading

import pytest

from conftest import needs_jupyterlab
from tiledlab import cli
from tiledlab.notebook import lab


def dry_run(capsys, *argv):
    """`python -m tiledlab lab ARGV --dry-run`, in this process: what it prints (it must succeed)."""
    assert cli.main(["lab", *argv, "--dry-run"]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.fixture
def src(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb"):
        (folder / name).write_text(json.dumps({"cells": [], "committed": name}))
    (folder / "notes.txt").write_text("not a notebook")
    return folder


def test_working_copy_copies_every_notebook_and_ignores_itself(src, tmp_path):
    dest = lab.working_copy(src, tmp_path / "work")
    assert sorted(p.name for p in dest.glob("*.ipynb")) == ["01_a.ipynb", "02_b.ipynb"]
    assert not (dest / "notes.txt").exists()
    assert (dest / ".gitignore").read_text().splitlines()[-1] == "*"


def test_working_copy_keeps_a_students_work_unless_fresh(src, tmp_path):
    dest = lab.working_copy(src, tmp_path / "work")
    (dest / "01_a.ipynb").write_text("student's edits")
    lab.working_copy(src, dest)
    assert (dest / "01_a.ipynb").read_text() == "student's edits"
    lab.working_copy(src, dest, fresh=True)
    assert json.loads((dest / "01_a.ipynb").read_text())["committed"] == "01_a.ipynb"


def test_working_copy_refuses_the_committed_folder_and_an_empty_one(src, tmp_path):
    with pytest.raises(ValueError):
        lab.working_copy(src, src)
    with pytest.raises(FileNotFoundError):
        lab.working_copy(tmp_path / "nothing", tmp_path / "work")


def test_lab_argv_allows_root_only_as_root(tmp_path):
    as_root = lab.lab_argv(tmp_path, ["--no-browser"], root=True, python="py")
    assert as_root == ["py", "-m", "jupyter", "lab", str(tmp_path), *lab.QUIET, "--allow-root", "--no-browser"]


def test_lab_starts_without_news_or_update_toasts(tmp_path):
    argv = lab.lab_argv(tmp_path, root=False)
    assert "--LabApp.news_url=None" in argv and "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate" in argv
    assert "--allow-root" not in lab.lab_argv(tmp_path, root=False)
    assert lab.lab_argv(tmp_path, ["--allow-root"], root=True).count("--allow-root") == 1


def test_default_source_is_the_series_notebooks():
    assert lab.SOURCE.name == "notebooks" and any(lab.SOURCE.glob("*.ipynb"))


@needs_jupyterlab
def test_cli_lab_dry_run_writes_nothing_and_passes_options_on(src, tmp_path, capsys):
    out = dry_run(capsys, "--src", str(src), "--dest", str(tmp_path / "w"), "--no-browser", "--port", "9999")
    assert not (tmp_path / "w").exists() and "would copy 2 notebooks" in out and "keeping" not in out
    command = out.strip().splitlines()[-1]
    assert command.endswith("--no-browser --port 9999") and " -m jupyter lab " in command
    lab.working_copy(src, tmp_path / "w")  # the next start: the student's copies stay
    assert f"would copy 0 notebooks into {tmp_path / 'w'}, keeping the 2 there" in dry_run(
        capsys, "--src", str(src), "--dest", str(tmp_path / "w"))


def snapshot(folder):
    """{relative path: bytes} of everything under `folder`, and the folders beside it."""
    return {str(p.relative_to(folder.parent)): p.read_bytes() if p.is_file() else None
            for p in folder.parent.rglob("*")}


def test_fresh_moves_the_students_work_to_a_backup_beside_the_copy(src, tmp_path):
    dest = lab.working_copy(src, tmp_path / "work")
    (dest / "01_a.ipynb").write_text("student's edits")
    lab.working_copy(src, dest, fresh=True, say=lambda line: None)
    assert json.loads((dest / "01_a.ipynb").read_text())["committed"] == "01_a.ipynb"
    backups = [p for p in tmp_path.iterdir() if p.name.startswith("work-backup-")]
    assert len(backups) == 1 and (backups[0] / "01_a.ipynb").read_text() == "student's edits"
    assert not (backups[0] / "02_b.ipynb").exists()  # unchanged notebooks need no backup
    assert (backups[0] / ".gitignore").read_text().splitlines()[-1] == "*"


def test_fresh_twice_in_a_second_keeps_both_backups(src, tmp_path):
    dest = lab.working_copy(src, tmp_path / "work")
    for edit in ("first", "second"):
        (dest / "01_a.ipynb").write_text(edit)
        lab.working_copy(src, dest, fresh=True, say=lambda line: None)
    kept = sorted((p / "01_a.ipynb").read_text() for p in tmp_path.glob("work-backup-*"))
    assert kept == ["first", "second"]


def test_cli_lab_fresh_says_where_the_backup_is(src, tmp_path, capsys):
    dest = lab.working_copy(src, tmp_path / "work")
    (dest / "02_b.ipynb").write_text("student's edits")
    out = dry_run(capsys, "--src", str(src), "--dest", str(dest), "--fresh")
    assert "would move 1 edited notebook" in out and "work-backup-" in out


@pytest.mark.parametrize("fresh", [[], ["--fresh"]])
def test_cli_lab_dry_run_leaves_the_working_copy_byte_identical(src, tmp_path, fresh, capsys):
    dest = lab.working_copy(src, tmp_path / "work")
    (dest / "01_a.ipynb").write_text("student's edits")
    (dest / "02_b.ipynb").unlink()
    before = snapshot(dest)
    dry_run(capsys, "--src", str(src), "--dest", str(dest), *fresh)
    assert snapshot(dest) == before


@pytest.fixture
def zh_src(src):
    """A fake generated Chinese edition, notebooks/zh/, beside the English notebooks."""
    (src / "zh").mkdir()
    (src / "zh" / "01_a.ipynb").write_text(json.dumps({"cells": [], "committed": "zh/01_a.ipynb"}))
    (src / "zh" / "LANGUAGE").write_text("zh\n")
    return src


@needs_jupyterlab
def test_cli_lab_lang_zh_dry_run_copies_the_chinese_edition_into_its_own_folder(zh_src, tmp_path, capsys):
    out = dry_run(capsys, "--src", str(zh_src), "--dest", str(tmp_path / "w"), "--lang", "zh", "--no-browser")
    assert not (tmp_path / "w").exists()
    assert f"would copy 1 notebook into {tmp_path / 'w' / 'zh'}" in out
    command = out.strip().splitlines()[-1]
    assert " TILEDLAB_LANG=zh " in command and f" lab {tmp_path / 'w' / 'zh'} " in command


def test_lab_env_sets_the_language_for_kernels_and_the_ui_only_with_the_pack(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    config = {"JUPYTER_CONFIG_PATH": str(tmp_path / lab.CONFIG_NAME)}
    assert lab.lab_env("en", tmp_path) == config
    assert lab.lab_env("zh", tmp_path, pack=False) == {**config, "TILEDLAB_LANG": "zh"}
    assert lab.lab_env("zh", tmp_path, pack=True) == {**config, "TILEDLAB_LANG": "zh",
                                                     "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / ".lab-settings")}
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/theirs")  # a user's own config path is kept, after ours
    assert lab.lab_env("en", tmp_path)["JUPYTER_CONFIG_PATH"] == f"{tmp_path / lab.CONFIG_NAME}{os.pathsep}/theirs"


def started(monkeypatch, argv):
    """Run the lab command in-process up to JupyterLab's start: (argv, env) it would exec."""
    calls = []
    monkeypatch.setattr(lab.os, "execve", lambda path, cmd, env: calls.append((cmd, env)))
    monkeypatch.setattr(lab.subprocess, "call", lambda cmd, env: calls.append((cmd, env)) or 0)
    lab.start(*lab.parser().parse_known_args(argv))
    return calls[0]  # execve, mocked, returns: the subprocess fallback follows


@needs_jupyterlab
def test_lab_lang_zh_makes_a_chinese_working_copy_with_chinese_lab_settings(zh_src, tmp_path, monkeypatch):
    mine = tmp_path / "my-settings"
    (mine / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (mine / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings").write_text('{"theme": "JupyterLab Dark"}')
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(mine))
    monkeypatch.setattr(lab, "has_language_pack", lambda locale="zh_CN": True)
    cmd, env = started(monkeypatch, ["--src", str(zh_src), "--dest", str(tmp_path / "w"), "--lang", "zh"])
    work = tmp_path / "w" / "zh"
    assert json.loads((work / "01_a.ipynb").read_text())["committed"] == "zh/01_a.ipynb"
    assert (work / "LANGUAGE").read_text().strip() == "zh" and (work / ".gitignore").exists()
    assert cmd[4] == str(work) and env["TILEDLAB_LANG"] == "zh"
    settings = pathlib.Path(env["JUPYTERLAB_SETTINGS_DIR"])
    assert settings == work / ".lab-settings"
    assert json.loads((settings / lab.TRANSLATION_SETTINGS).read_text()) == {"locale": "zh_CN"}
    assert "Dark" in (settings / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings").read_text()
    assert not (mine / lab.TRANSLATION_SETTINGS).exists()  # the user's own settings are left alone
    assert not (tmp_path / "w" / "01_a.ipynb").exists()  # the English copy is another folder


def test_lab_lang_zh_without_the_pack_keeps_the_users_lab_settings(zh_src, tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTERLAB_SETTINGS_DIR", raising=False)
    monkeypatch.setattr(lab, "has_language_pack", lambda locale="zh_CN": False)
    cmd, env = started(monkeypatch, ["--src", str(zh_src), "--dest", str(tmp_path / "w"), "--lang", "zh"])
    assert env["TILEDLAB_LANG"] == "zh" and "JUPYTERLAB_SETTINGS_DIR" not in env
    assert not (tmp_path / "w" / "zh" / ".lab-settings").exists()


def test_lab_in_english_adds_only_its_page_config_to_the_environment(src, tmp_path, monkeypatch):
    monkeypatch.delenv("TILEDLAB_LANG", raising=False)
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    cmd, env = started(monkeypatch, ["--src", str(src), "--dest", str(tmp_path / "w")])
    config = tmp_path / "w" / lab.CONFIG_NAME
    assert cmd[4] == str(tmp_path / "w") and env == {**lab.os.environ, "JUPYTER_CONFIG_PATH": str(config)}
    assert not (tmp_path / "w" / "LANGUAGE").exists()
    # No "get notified about official Jupyter news?" toast: the plugin that asks is off (page config).
    page = json.loads((config / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {"@jupyterlab/apputils-extension:announcements": True}


def test_the_working_copy_carries_this_python_so_jupyterlab_does_not_mark_it_modified(tmp_path):
    import json, platform
    from tiledlab.notebook import lab
    src = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
    dest = lab.working_copy(src, tmp_path / "work", say=lambda *a: None)
    for nb in sorted(src.glob("*.ipynb")):
        copy, committed = json.loads((dest / nb.name).read_text()), json.loads(nb.read_text())
        assert copy["metadata"]["language_info"]["version"] == platform.python_version()
        committed["metadata"]["language_info"]["version"] = platform.python_version()
        assert copy == committed  # nothing else changed
    assert lab.plan(src, dest, fresh=True) == ([], [])  # an untouched copy is not "edited"
    (dest / "01_naive_reads.ipynb").write_text((dest / "01_naive_reads.ipynb").read_text().replace("2N", "3N", 1))
    copies, edited = lab.plan(src, dest, fresh=True)
    assert [p.name for p in copies] == [p.name for p in edited] == ["01_naive_reads.ipynb"]
