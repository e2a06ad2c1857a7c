"""How the Chinese edition reads, measured: colons per 1,000 Chinese characters, sentences over 80
characters, "committed" said as 已提交/提交的, over every translated message of the notebook and docs
catalogs (prose only: code, formulas, link targets and HTML left out). The limits are half of what a
review found (13.9 colons per 1,000 characters, 100 long sentences, 22 uses of 已提交/提交的): run this
file with -s to print the figures, catalog by catalog.

    python -m pytest -n 0 -s tests/test_zh_style.py
"""
import pathlib
import re

import pytest

from tools.edition import catalogs, sources

ROOT = pathlib.Path(__file__).resolve().parents[1]
COLONS_PER_1000, LONG_SENTENCES, COMMITTED = 6.9, 50, 0  # half of 13.9 and of 100; none of 22
LONG = 80  # characters in a sentence, spaces not counted, a code span or formula as one

_HIDDEN = re.compile(r"```.*?```|~~~.*?~~~|\$\$.*?\$\$", re.S)
_ONE = re.compile(r"`[^`\n]*`|\$[^$\n]+\$|<[^>\n]+>|https?://\S+")
_TARGET = re.compile(r"\]\([^)\s]*\)")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_COMMITTED = re.compile(r"已提交|提交的")


def prose(text):
    """The words a reader reads: code blocks dropped, a code span, formula or URL one character."""
    return _ONE.sub("X", _TARGET.sub("]", _HIDDEN.sub("", text)))


def sentences(text):
    """Each sentence of a message's prose: split at 。！？, at line breaks and between table cells."""
    for line in prose(text).split("\n"):
        line = re.sub(r"^\s*(#+|[-*+]|\d+\.|>)\s+", "", line)
        for cell in line.split("|"):
            for s in re.split(r"(?<=[。！？])", cell):
                if _CJK.search(s):
                    yield s.strip()


def length(sentence):
    return len(re.sub(r"\s", "", sentence))


def figures(root=ROOT):
    """{catalog name: (Chinese characters, colons, sentences over LONG, 已提交/提交的)} of the prose catalogs."""
    found = {}
    for path in sorted((root / sources.LOCALE).glob("**/*.po")):
        texts = [m.string for m in catalogs.read(path) if m.id and m.string]
        found[path.stem] = (sum(len(_CJK.findall(prose(t))) for t in texts), sum(prose(t).count("：") for t in texts),
                            sum(length(s) > LONG for t in texts for s in sentences(t)),
                            sum(len(_COMMITTED.findall(t)) for t in texts))
    return found


def test_the_chinese_prose_reads_like_a_chinese_author_wrote_it():
    found = figures()
    chars, colons, long, committed = (sum(f[k] for f in found.values()) for k in range(4))
    for name, (c, n, lg, cm) in found.items():
        print(f"{name:20s} {c:6,} characters  {1000 * n / max(c, 1):5.1f} ：/1,000  {lg:3} long  {cm} 已提交")
    print(f"{'all':20s} {chars:6,} characters  {1000 * colons / chars:5.1f} ：/1,000  {long:3} long  {committed} 已提交")
    assert 1000 * colons / chars <= COLONS_PER_1000, "split the colon chains: say it as two sentences, or with 即/也就是"
    assert long <= LONG_SENTENCES, f"{long} sentences over {LONG} characters: split them"
    assert committed <= COMMITTED, "「committed」 is 仓库中保存的 (or 仓库里的), not 已提交/提交的"


@pytest.mark.parametrize("text, want", [("一句话。第二句：`code` 在这里！", ["一句话。", "第二句：X 在这里！"]),
                                        ("| 表头 | 中文 |\n- 列表项", ["表头", "中文", "列表项"])])
def test_sentences_split_at_stops_lines_and_cells(text, want):
    assert list(sentences(text)) == want


_COMMAND = re.compile(r"python -m [a-z]+(?: [a-z-]+)?")


def test_every_command_a_message_names_is_named_alike_in_chinese():
    """A translation that names `python -m tiledlab execute` where the English says `python -m tools execute`
    sends a Chinese reader to a command that does not exist (it happened once)."""
    wrong = []
    for path in sorted((ROOT / sources.LOCALE).glob("**/*.po")):
        for m in catalogs.read(path):
            if m.id and m.string:
                said = " ".join(m.string.split())
                wrong += [f"{path.stem} {m.context}: {c}" for c in set(_COMMAND.findall(" ".join(m.id.split())))
                          if c not in said]
    assert wrong == []
