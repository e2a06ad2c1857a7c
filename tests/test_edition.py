"""The Chinese edition's machinery (tools.edition), on tiny notebooks in tmp_path; then the real tree.

The repository tests run `check` on the committed edition and fail on any problem; they skip only while
no notebook catalog exists yet (locale/zh_CN/LC_MESSAGES/notebooks/).
"""
import json
import pathlib
import shutil
import subprocess
import sys

import nbformat
import pytest

from tools import edition
from tools.edition import catalogs, generate, make, own_words, sources

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = pathlib.Path("/work/shared/seeds")  # the source articles: on the authors' machine only, never in CI
FINGERPRINT = ROOT / "tests/data/seed_runs.txt"
CATALOGS = ROOT / sources.LOCALE / "notebooks"

INTRO = "# One tile\n\nThe guide is [here](../docs/teaching.md); next, [notebook 2](02_b.ipynb)."
SUMMARY = "**Summary.** Every value of A is fetched N times."
BADGES = ("[![Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
          "(https://colab.research.google.com/github/OWNER/tiledlab/blob/main/notebooks/01_a.ipynb)")
CODE = "x = 2 * 3\nprint(x)"
PAGE = "# Start\n\nOpen [notebook 1](/notebooks/01_a) or [the guide](teaching).\n\n- one\n- two\n"
ZH = {"intro": "# 一个分块\n\n教师指南在[这里](../docs/teaching.md)；下一步是[第 2 个笔记本](02_b.ipynb)。",
      "badges": "[![在 Colab 中打开]({1})]({2})", "summary": "**小结。** A 的每个值都被取了 N 次。"}


def write_notebook(path, cells):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = cells
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def english_cells():
    code = nbformat.v4.new_code_cell(CODE, id="code1", execution_count=1, metadata={"tags": ["keep"]},
                                     outputs=[nbformat.v4.new_output("stream", name="stdout", text="6\n")])
    return [nbformat.v4.new_markdown_cell(INTRO, id="intro"),
            nbformat.v4.new_markdown_cell(BADGES, id="badges", metadata={"tags": ["links"]}),
            code, nbformat.v4.new_markdown_cell("", id="empty"),
            nbformat.v4.new_markdown_cell(SUMMARY, id="summary")]


@pytest.fixture
def repo(tmp_path):
    """A tiny series: one English notebook and docs/index.md."""
    write_notebook(tmp_path / "notebooks/01_a.ipynb", english_cells())
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/index.md").write_text(PAGE, encoding="utf-8")
    return tmp_path


def po(root, stem="01_a", kind="notebooks"):
    return root / sources.LOCALE / kind / f"{stem}.po"


def translate(root, strings, stem="01_a", kind="notebooks"):
    """Fill the catalog's msgstrs for the given contexts and clear their fuzzy flags, as a translator does."""
    catalog = catalogs.read(po(root, stem, kind))
    for m in catalog:
        if m.id and m.context in strings:
            m.string = strings[m.context]
            m.flags.discard("fuzzy")
    po(root, stem, kind).write_bytes(catalogs.text(catalog))


def translated(root):
    edition.update(root)
    translate(root, ZH)
    translate(root, {"index:0": "# 开始", "index:1": "打开[第 1 个笔记本](/notebooks/01_a)或[教师指南](teaching)。",
                     "index:2": "- 一\n- 二"}, "index", "docs")
    return root


def change_english(root, change):
    path = root / "notebooks/01_a.ipynb"
    nb = nbformat.read(path, as_version=4)
    change(nb.cells)
    nbformat.write(nb, path)


def by_context(catalog):
    return {m.context: m for m in catalog if m.id}


# --- update ---------------------------------------------------------------------------------------

def test_update_writes_one_message_per_markdown_cell_with_text(repo):
    edition.update(repo)
    catalog = catalogs.read(po(repo))
    assert catalogs.keys(catalog) == [("intro", INTRO), ("badges", "[![Colab]({1})]({2})"),  # a links cell's URLs
                                      ("summary", SUMMARY)]  # no code or empty cell
    assert all(m.string == "" and not m.fuzzy for m in catalog if m.id)
    assert catalogs.keys(catalogs.read(po(repo, "index", "docs"))) == [
        ("index:0", "# Start"), ("index:1", "Open [notebook 1](/notebooks/01_a) or [the guide](teaching)."),
        ("index:2", "- one\n- two")]


def test_update_adds_new_fuzzies_changed_and_makes_vanished_obsolete(repo):
    translated(repo)
    new = "Exercise: time the kernel at T = 16 and explain the change."

    def change(cells):
        cells[4].source = SUMMARY.replace("N times", "N times, once per row")
        cells.insert(4, nbformat.v4.new_markdown_cell(new, id="exercise"))
        del cells[0]
    change_english(repo, change)
    edition.update(repo)
    catalog = catalogs.read(po(repo))
    messages = by_context(catalog)
    assert list(messages) == ["badges", "exercise", "summary"]
    assert messages["exercise"].string == "" and not messages["exercise"].fuzzy
    assert messages["summary"].fuzzy and messages["summary"].string == ZH["summary"]
    assert messages["summary"].previous_id == [SUMMARY]
    assert [(m.context, m.string) for m in catalog.obsolete.values()] == [("intro", ZH["intro"])]
    problems = edition.check(repo)
    assert f"{sources.LOCALE.as_posix()}/notebooks/01_a.po: exercise untranslated" in problems
    assert any(p.endswith("summary fuzzy: the English changed; review the translation, then clear the fuzzy flag")
               for p in problems)


def test_update_leaves_a_catalog_whose_translator_kept_long_lines_untouched(repo):
    translated(repo)
    translate(repo, {"intro": "一个很长的译文行，中间有 N 和 T 这样的英文字母，" * 6})  # Babel wraps it at the spaces
    unwrapped = catalogs.text(catalogs.read(po(repo)), width=0)  # one line per msgstr, as an editor may save it
    assert unwrapped != catalogs.text(catalogs.read(po(repo)))
    po(repo).write_bytes(unwrapped)
    assert "01_a.po: up to date" in "\n".join(edition.update(repo)) and po(repo).read_bytes() == unwrapped


def test_update_twice_changes_nothing_and_keeps_the_previous_msgid(repo):
    translated(repo)
    longer = INTRO + "\n\n" + "A long line that Babel wraps in the catalog, " * 4 + "\"quoted\"."

    def change(cells):
        cells[4].source = SUMMARY + " Count them."
        cells[0].source = longer
    change_english(repo, change)
    edition.update(repo)
    once = po(repo).read_bytes()
    assert "up to date" in edition.update(repo)[0]
    assert po(repo).read_bytes() == once
    messages = by_context(catalogs.read(po(repo)))
    assert messages["summary"].previous_id == [SUMMARY] and messages["intro"].previous_id == [INTRO]
    assert messages["intro"].user_comments == []  # Babel reads `#| msgid` as a comment: taken back


def test_a_cell_with_a_new_id_but_the_same_text_keeps_its_translation(repo):
    translated(repo)
    change_english(repo, lambda cells: setattr(cells[0], "id", "renewed"))
    edition.update(repo)
    message = by_context(catalogs.read(po(repo)))["renewed"]
    assert message.string == ZH["intro"] and not message.fuzzy


def test_a_rewritten_cell_keeps_its_translation_fuzzy_however_much_it_changed(repo):
    translated(repo)
    change_english(repo, lambda cells: setattr(cells[4], "source", "Entirely different words here."))
    edition.update(repo)
    message = by_context(catalogs.read(po(repo)))["summary"]
    assert message.fuzzy and message.string == ZH["summary"]


def test_update_takes_a_hand_written_catalog_whose_msgids_end_in_a_newline(repo):
    """A translator's PO file without locations, a docs block's msgid with its line's newline: kept."""
    path = po(repo, "index", "docs")
    path.parent.mkdir(parents=True)
    path.write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                    'msgctxt "index:2"\nmsgid "- one\\n- two\\n"\nmsgstr "- 一\\n- 二\\n"\n', encoding="utf-8")
    edition.update(repo)
    message = by_context(catalogs.read(path))["index:2"]
    assert (message.id, message.string, message.fuzzy) == ("- one\n- two", "- 一\n- 二\n", False)
    assert generate.page(PAGE, catalogs.read(path), "index")[0].endswith("\n- 一\n- 二\n")


def test_a_paragraph_put_in_a_page_moves_no_other_translation(repo):
    """A page's contexts are its blocks' places (index:2): a block put in shifts every later one, and each of those
    keeps its own translation, not fuzzy, where the new block is untranslated (index:2 was the list, now is the new block)."""
    edition.update(repo)
    translate(repo, {"index:0": "# 开始", "index:1": "打开笔记本。", "index:2": "- 一\n- 二"}, "index", "docs")
    (repo / "docs/index.md").write_text(PAGE.replace("\n\n- one", "\n\nA new paragraph.\n\n- one"), encoding="utf-8")
    edition.update(repo)
    found = {m.id.strip(): (m.string, m.fuzzy) for m in catalogs.read(po(repo, "index", "docs")) if m.id}
    assert found["A new paragraph."] == ("", False) and found["- one\n- two"] == ("- 一\n- 二", False), found


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")
def test_gnu_gettext_reads_the_catalogs_and_their_fuzzy_messages(repo):
    translated(repo)
    change_english(repo, lambda cells: setattr(cells[0], "source", INTRO + "\nOne more line."))
    edition.update(repo)
    run = subprocess.run(["msgfmt", "--check", "--statistics", "-o", "/dev/null", str(po(repo))],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "2 translated messages, 1 fuzzy translation" in run.stderr, run.stderr


# --- build ----------------------------------------------------------------------------------------

def test_build_copies_code_cells_and_translates_markdown(repo):
    translated(repo)
    assert edition.build(repo) == []
    english = nbformat.read(repo / "notebooks/01_a.ipynb", as_version=4)
    chinese = nbformat.read(repo / "notebooks/zh/01_a.ipynb", as_version=4)
    assert [c.id for c in chinese.cells] == [c.id for c in english.cells]
    assert chinese.cells[2] == english.cells[2]  # source, outputs, metadata, execution count
    raw = json.loads((repo / "notebooks/zh/01_a.ipynb").read_text(encoding="utf-8"))
    assert raw["cells"][2] == json.loads((repo / "notebooks/01_a.ipynb").read_text(encoding="utf-8"))["cells"][2]
    assert chinese.cells[4].source == ZH["summary"] and chinese.cells[3].source == ""
    assert chinese.metadata["language"] == "zh-CN" and chinese.metadata["kernelspec"] == english.metadata["kernelspec"]
    assert (repo / "notebooks/zh/LANGUAGE").read_text() == "zh\n"
    assert edition.check(repo) == []


def test_build_moves_relative_links_one_folder_down_except_between_notebooks(repo):
    translated(repo)
    edition.build(repo)
    intro = nbformat.read(repo / "notebooks/zh/01_a.ipynb", as_version=4).cells[0].source
    assert "[这里](../../docs/teaching.md)" in intro and "(02_b.ipynb)" in intro
    page = (repo / "docs/zh/index.md").read_text(encoding="utf-8")
    assert page == "# 开始\n\n打开[第 1 个笔记本](/notebooks/zh/01_a)或[教师指南](teaching)。\n\n- 一\n- 二\n"


def test_relocate_leaves_urls_anchors_and_twins_alone():
    stays = generate._sibling_notebook
    text = ("[a](https://x.org/notebooks/b.ipynb) [b](#top) [c](03_c.ipynb#part) ![d](fig/d.png) "
            '<img src="../docs/e.svg"> [f](/abs)\n[g]: ../h.md')
    assert generate.relocate(text, stays) == (
        "[a](https://x.org/notebooks/b.ipynb) [b](#top) [c](03_c.ipynb#part) ![d](../fig/d.png) "
        '<img src="../../docs/e.svg"> [f](/abs)\n[g]: ../../h.md')


def test_links_cells_are_translated_with_their_urls_kept_and_notebook_urls_pointed_at_zh(repo):
    translated(repo)
    edition.build(repo)
    badges = nbformat.read(repo / "notebooks/zh/01_a.ipynb", as_version=4).cells[1]
    assert badges.source == BADGES.replace("notebooks/01_a.ipynb", "notebooks/zh/01_a.ipynb").replace(
        "[![Colab]", "[![在 Colab 中打开]")
    assert badges.metadata["tags"] == ["links"]
    binder = "https://mybinder.org/v2/gh/O/tiledlab/main?urlpath=lab/tree/notebooks/00_start_here.ipynb"
    assert generate.links_cell(f"[b]({binder})") == f"[b]({binder.replace('notebooks/', 'notebooks/zh/')})"
    assert generate.links_cell("(notebooks/zh/01_a.ipynb)") == "(notebooks/zh/01_a.ipynb)"


def test_build_is_deterministic(repo):
    translated(repo)
    edition.build(repo)
    first = {p: p.read_bytes() for p in sorted((repo / "notebooks/zh").iterdir())}
    edition.build(repo)
    assert {p: p.read_bytes() for p in sorted((repo / "notebooks/zh").iterdir())} == first


def test_build_on_a_partial_catalog_keeps_english_and_says_where(repo):
    edition.update(repo)
    translate(repo, {"intro": ZH["intro"]})
    english = edition.build(repo)
    catalog = f"{sources.LOCALE.as_posix()}/notebooks/01_a.po"
    assert f"{catalog}: summary not translated (or fuzzy): English kept" in english
    assert not any(": intro " in line for line in english)
    cells = nbformat.read(repo / "notebooks/zh/01_a.ipynb", as_version=4).cells
    assert cells[4].source == SUMMARY and cells[0].source.startswith("# 一个分块")
    assert (repo / "docs/zh/index.md").read_text(encoding="utf-8").startswith("# Start")


def test_a_fuzzy_translation_is_not_used(repo):
    translated(repo)
    change_english(repo, lambda cells: setattr(cells[4], "source", SUMMARY + " Count them."))
    edition.update(repo)
    assert any(": summary not translated (or fuzzy)" in line for line in edition.build(repo))
    assert nbformat.read(repo / "notebooks/zh/01_a.ipynb", as_version=4).cells[4].source == SUMMARY + " Count them."


# --- check ----------------------------------------------------------------------------------------

def test_a_changed_english_code_cell_makes_the_edition_out_of_date(repo):
    translated(repo)
    edition.build(repo)
    assert edition.check(repo) == []
    change_english(repo, lambda cells: setattr(cells[2], "source", CODE.replace("3", "4")))
    problems = edition.check(repo)
    assert "notebooks/zh/01_a.ipynb: out of date: run `python -m tools translate build`" in problems
    assert "notebooks/zh/01_a.ipynb: code cell code1 differs from notebooks/01_a.ipynb" in problems
    assert not any(".po:" in p for p in problems)  # a code cell is not a message: the catalog is still current
    edition.build(repo)
    assert edition.check(repo) == []


def test_a_code_cell_edited_in_the_chinese_notebook_is_reported(repo):
    translated(repo)
    edition.build(repo)
    path = repo / "notebooks/zh/01_a.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = CODE.replace("3", "4")
    nbformat.write(nb, path)
    assert "notebooks/zh/01_a.ipynb: code cell code1 differs from notebooks/01_a.ipynb" in edition.check(repo)


def test_a_chinese_run_keeps_its_outputs_until_the_code_changes(repo):
    translated(repo)
    edition.build(repo)
    path = repo / "notebooks/zh/01_a.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="六\n")]  # as a run in Chinese stores
    nbformat.write(nb, path)
    assert edition.check(repo) == []
    edition.build(repo)
    assert nbformat.read(path, as_version=4).cells[2].outputs[0].text == "六\n"
    change_english(repo, lambda cells: setattr(cells[2], "source", CODE.replace("3", "4")))
    edition.build(repo)
    assert nbformat.read(path, as_version=4).cells[2].outputs[0].text == "6\n"  # the English run's, until re-run


def test_check_reports_a_stale_catalog_empty_and_fuzzy_messages_and_missing_files(repo):
    assert f"{sources.LOCALE.as_posix()}/notebooks/01_a.po: missing: run `python -m tools translate update`, " \
           "then translate it" in edition.check(repo)
    translated(repo)
    change_english(repo, lambda cells: setattr(cells[0], "source", INTRO + " Read it first."))
    catalog = f"{sources.LOCALE.as_posix()}/notebooks/01_a.po"
    problems = edition.check(repo)
    assert f"{catalog}: out of date with notebooks/01_a.ipynb: run `python -m tools translate update`" in problems
    assert "notebooks/zh/01_a.ipynb: missing: run `python -m tools translate build`" in problems
    assert "docs/zh/index.md: missing: run `python -m tools translate build`" in problems
    edition.update(repo)
    translate(repo, {"summary": ""})
    problems = edition.check(repo)
    assert f"{catalog}: summary untranslated" in problems and any("intro fuzzy" in p for p in problems)


def test_check_reports_chinese_files_that_no_english_source_makes(repo):
    translated(repo)
    edition.build(repo)
    write_notebook(repo / "notebooks/zh/99_gone.ipynb", [])
    assert edition.check(repo) == ["notebooks/zh/99_gone.ipynb: no English source makes it: delete it"]


def test_the_command_line_check_exits_1_listing_the_problems_then_0(repo, capsys):
    """One real `python -m tools` run (its exit status and output); the other steps in-process (the same
    main(), without a second start of numba: this test took 78 s on two busy cores with four)."""
    from tools import cli
    assert cli.main(["translate", "update", "--root", str(repo)]) == 0
    failed = subprocess.run([sys.executable, "-m", "tools", "translate", "check", "--root", str(repo)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert failed.returncode == 1 and "01_a.po: intro untranslated" in failed.stdout
    translate(repo, ZH)
    translate(repo, {"index:0": "# 开始", "index:1": "打开。", "index:2": "- 一\n- 二"}, "index", "docs")
    assert cli.main(["translate", "build", "--root", str(repo)]) == 0
    capsys.readouterr()
    assert cli.main(["translate", "check", "--root", str(repo)]) == 0 and "up to date" in capsys.readouterr().out


# --- own words ------------------------------------------------------------------------------------

def test_runs_count_cjk_characters_only():
    assert own_words.cjk("共享 memory，内存 2 次") == "共享内存次"
    assert own_words.runs("一二三四五六七八九十甲乙丙", 12) == ["一二三四五六七八九十甲乙", "二三四五六七八九十甲乙丙"]
    assert own_words.digest("一") == __import__("hashlib").sha256("一".encode()).hexdigest()[:16]


def article_sentence():
    """A stretch of the real articles where they are here, else a synthetic "article"."""
    if SEEDS.is_dir():
        text = own_words.cjk(sorted(SEEDS.glob("*.txt"))[0].read_text(encoding="utf-8"))
        return sorted(SEEDS.glob("*.txt")), text[100:100 + own_words.RUN + 3]
    return None, "这是一段用来测试的虚构文章句子绝不应被抄写"


def test_own_words_catches_a_run_planted_in_a_catalog(repo, tmp_path_factory):
    articles, sentence = article_sentence()
    if articles is None:
        articles = [tmp_path_factory.mktemp("seeds") / "article.txt"]
        articles[0].write_text(f"前言。\n{sentence[:7]}\n{sentence[7:]}。", encoding="utf-8")  # wrapped
    fingerprint = tmp_path_factory.mktemp("fp") / "runs.txt"
    assert edition.write_fingerprint(articles, fingerprint) > 0
    assert fingerprint.read_text(encoding="utf-8").startswith("# Fingerprint of the two source articles")
    digests = own_words.read_fingerprint(fingerprint)
    translated(repo)
    assert own_words.problems(repo, digests) == []
    planted = f"小结：{sentence[:5]}，{sentence[5:]}。"  # re-punctuated: still the same characters
    translate(repo, {"summary": planted})
    problems = edition.check(repo, digests)
    assert f"{sources.LOCALE.as_posix()}/notebooks/01_a.po: copies 「{sentence}」 from the source articles " \
           "(12+ CJK characters in a row): say it in your own words" in problems
    edition.build(repo)
    assert any(p.startswith("notebooks/zh/01_a.ipynb: copies") for p in own_words.problems(repo, digests))


def test_the_committed_fingerprint_is_sorted_hex_and_matches_the_articles(tmp_path):
    digests = [line for line in FINGERPRINT.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    assert digests == sorted(set(digests)) and len(digests) > 1000
    assert all(len(d) == 16 and int(d, 16) >= 0 for d in digests)
    if not SEEDS.is_dir():
        pytest.skip(f"{SEEDS} (the source articles) is not on this machine: the committed fingerprint is used as is")
    edition.write_fingerprint(sorted(SEEDS.glob("*.txt")), tmp_path / "runs.txt")
    assert (tmp_path / "runs.txt").read_text(encoding="utf-8") == FINGERPRINT.read_text(encoding="utf-8")


def test_no_committed_chinese_text_copies_the_source_articles():
    assert own_words.problems(ROOT, own_words.read_fingerprint(FINGERPRINT)) == []


# --- the repository's own edition -----------------------------------------------------------------

needs_catalogs = pytest.mark.skipif(not CATALOGS.is_dir(), reason=f"no catalogs yet ({CATALOGS.relative_to(ROOT)}"
                                    " does not exist): the Chinese edition is not merged")


@needs_catalogs
def test_the_committed_chinese_edition_has_no_problems():
    assert edition.check(ROOT) == []


@needs_catalogs
def test_every_english_notebook_has_a_chinese_one_with_the_same_code_cells():
    for path in sources.english_notebooks(ROOT):
        assert (ROOT / sources.ZH_NOTEBOOKS / path.name).exists(), path.name
    assert [p for path in sources.english_notebooks(ROOT) for p in edition.verify.code_problems(ROOT, path)] == []


def test_code_that_looks_like_a_link_is_left_alone():
    from tools.edition.generate import relocate
    text = "Launch it as `kernel[grid, block](A, B, C)`; see [the guide](../docs/teaching.md).\n\n```\nx[0](y)\n```"
    out = relocate(text, lambda path: False)
    assert "`kernel[grid, block](A, B, C)`" in out and "```\nx[0](y)\n```" in out
    assert "[the guide](../../docs/teaching.md)" in out


# --- code cells: comments, shown strings; terms; obsolete messages --------------------------------

EXERCISE = ("# Exercise 1.1\nT = 4  # the check binds T\n\n\n@cuda.jit\ndef k(A, B, C):\n    # your code: two\n"
            "    # accumulators\n    pass\n\n\nprint(f\"Budget: {T * 2:,} loads\")")


@pytest.fixture
def exercise_repo(repo):
    change_english(repo, lambda cells: cells.insert(3, nbformat.v4.new_code_cell(EXERCISE, id="ex1")))
    edition.update(repo)
    translate(repo, {**ZH, "ex1#1": "练习 1.1", "ex1#2": "检查会绑定 T", "ex1#3": "在这里写你的代码：两个累加器"})
    translate(repo, {"index:0": "# 开始", "index:1": "打开。", "index:2": "- 一\n- 二"}, "index", "docs")
    return repo


def test_an_exercise_cells_comments_are_translated_and_its_statements_kept(exercise_repo):
    assert [c for c, _, _ in sources.notebook_messages(sources.read_notebook(exercise_repo / "notebooks/01_a.ipynb"))
            if c.startswith("ex1")] == ["ex1#1", "ex1#2", "ex1#3"]  # the two comment lines are one message
    strings = catalogs.read(exercise_repo / sources.CODE_CATALOG)
    assert [m.id for m in strings if m.id] == ["Budget: {T * 2:,} loads"]  # what the cell prints, its field as written
    m = strings.get("Budget: {T * 2:,} loads")
    m.string = "预算：{T * 2:,} 次加载"
    (exercise_repo / sources.CODE_CATALOG).write_bytes(catalogs.text(strings))
    edition.build(exercise_repo)
    zh = nbformat.read(exercise_repo / "notebooks/zh/01_a.ipynb", as_version=4).cells[3].source
    assert zh == EXERCISE.replace("# Exercise 1.1", "# 练习 1.1").replace("# the check binds T", "# 检查会绑定 T") \
        .replace("    # your code: two\n    # accumulators", "    # 在这里写你的代码：两个累加器")
    assert edition.check(exercise_repo) == []
    assert (exercise_repo / sources.CODE_CATALOG.with_suffix(".mo")).exists()  # compiled for the package


def test_a_statement_changed_in_a_chinese_exercise_cell_is_reported(exercise_repo):
    edition.build(exercise_repo)
    path = exercise_repo / "notebooks/zh/01_a.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[3].source = nb.cells[3].source.replace('f"Budget', 'f"预算')  # a string is a statement's token
    nbformat.write(nb, path)
    assert "notebooks/zh/01_a.ipynb: code cell ex1 differs from notebooks/01_a.ipynb" in edition.check(exercise_repo)


def test_a_code_string_whose_translation_names_another_field_is_reported(exercise_repo):
    strings = catalogs.read(exercise_repo / sources.CODE_CATALOG)
    strings.get("Budget: {T * 2:,} loads").string = "预算：{budget:,} 次加载"
    (exercise_repo / sources.CODE_CATALOG).write_bytes(catalogs.text(strings))
    assert any("its msgstr has fields the code does not, ['{budget:,}']" in p for p in edition.check(exercise_repo))


def test_check_reports_a_variant_the_glossary_avoids_and_obsolete_messages(exercise_repo):
    (exercise_repo / "docs/glossary.md").write_text(
        "# G\n\n| English | 中文 | not written | where |\n| --- | --- | --- | --- |\n"
        "| fair pair | 公平对照组 | 公平对照 | 4 |\n| reuse | 复用 | 重用 | 2 |\n", encoding="utf-8")
    edition.update(exercise_repo)
    translate(exercise_repo, {"glossary:0": "# 术语", "glossary:1": "| English | 中文 | 不用 | 在哪里 |\n| --- | --- | --- "
                              "| --- |\n| fair pair | 公平对照组 | 公平对照 | 4 |\n| reuse | 复用 | 重用 | 2 |"}, "glossary", "docs")
    translate(exercise_repo, {"summary": "**小结。** 公平对照组重用了 A 的每个值。"})
    edition.build(exercise_repo)
    problems = edition.check(exercise_repo)
    assert [p for p in problems if "glossary says" in p] == [
        f"{sources.LOCALE.as_posix()}/notebooks/01_a.po: 'summary' writes 「重用」: the glossary says 「复用」"]  # 公平对照组 is no 公平对照
    change_english(exercise_repo, lambda cells: cells.pop(0))
    edition.update(exercise_repo)
    assert f"{sources.LOCALE.as_posix()}/notebooks/01_a.po: 1 obsolete messages (#~): reuse their translations " \
           "where they fit, then delete them" in edition.check(exercise_repo)


def test_check_reports_a_paragraph_the_edition_renders_two_ways(repo):
    """One rendering per English paragraph: the intro's heading, translated twice differently, is reported."""
    cells = english_cells()
    cells.append(nbformat.v4.new_markdown_cell("# One tile\n\nAgain.", id="again"))
    write_notebook(repo / "notebooks/01_a.ipynb", cells)
    translated(repo)
    translate(repo, {"again": "# 一块分块\n\n再来一次。"})
    edition.build(repo)
    assert [p for p in edition.check(repo) if "ways" in p] == [
        f"{sources.LOCALE.as_posix()}/notebooks/01_a.po: intro and {sources.LOCALE.as_posix()}/notebooks/01_a.po: again "
        "render '# One tile' in 2 ways: write it one way"]
    translate(repo, {"again": "# 一个分块\n\n再来一次。"})
    assert not [p for p in edition.check(repo) if "ways" in p]


def test_a_variant_that_holds_the_preferred_term_is_still_reported(exercise_repo):
    """未命中 holds 命中: the preferred term must not hide its own variant."""
    (exercise_repo / "docs/glossary.md").write_text(
        "# G\n\n| English | 中文 | not written | where |\n| --- | --- | --- | --- |\n"
        "| hit / miss | 命中 / 缺失 | 未命中 | 6 |\n", encoding="utf-8")
    edition.update(exercise_repo)
    translate(exercise_repo, {"glossary:0": "# 术语", "glossary:1": "| English | 中文 | 不用 | 在哪里 |\n| --- | --- | --- "
                              "| --- |\n| hit / miss | 命中 / 缺失 | 未命中 | 6 |"}, "glossary", "docs")
    translate(exercise_repo, {"summary": "**小结。** 未命中 L2 的加载更慢，命中的更快。"})
    edition.build(exercise_repo)
    assert [p for p in edition.check(exercise_repo) if "glossary says" in p] == [
        f"{sources.LOCALE.as_posix()}/notebooks/01_a.po: 'summary' writes 「未命中」: the glossary says 「命中 / 缺失」"]
