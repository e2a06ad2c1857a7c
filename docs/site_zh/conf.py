"""Sphinx configuration of the Chinese site (中文版): the English configuration (docs/conf.py) with the
generated Chinese pages as its sources. Build it into the English site's zh/ folder, after the English one:

    python -m sphinx -W --keep-going -E -c docs/site_zh -d build/doctrees-zh -b html . build/site/zh

Its pages are docs/zh/*.md and notebooks/zh/*.ipynb, written by `python -m tools translate build` from
the English ones and the catalogs in locale/; each page links to the same page of the other edition.
"""
import pathlib
import re
import runpy

_base = pathlib.Path(__file__).resolve().parents[1]
globals().update({k: v for k, v in runpy.run_path(str(_base / "conf.py")).items() if not k.startswith("_")})

language = "zh_CN"  # Sphinx's and the theme's own words (search, contents, ...) in Chinese
root_doc = "docs/zh/index"
# English pages with no Chinese twin that a page here links: the README's docs/classroom, and each
# docs/X.md a Chinese page links as ../X.md (the teacher's guide: classroom, claims). Only those, so that
# every page of the build is reached by a link.
_linked = sorted({"docs/classroom.md"} | {f"docs/{m}" for page in (_base / "zh").glob("*.md")
                  for m in re.findall(r"\]\(\.\./([\w-]+\.md)", page.read_text(encoding="utf-8"))})
include_patterns = ["docs/zh/**", "notebooks/zh/*.ipynb", "README.md", *_linked]
exclude_patterns = ["**/.ipynb_checkpoints"]
html_title = "tiledlab：为什么分块能减少全局内存加载（实测）"
html_favicon = str(_base / "_static" / "favicon.svg")  # paths in the English conf are relative to docs/
html_extra_path = [str(pathlib.Path(__file__).parent / "_extra")]
edition = "zh"
# Sphinx 9's Chinese search support writes a page script that calls a ChineseStemmer it never ships
# (every page: "ChineseStemmer is not defined" in the console); the English index still finds code
# names, numbers and English terms on the Chinese pages.
html_search_language = "en"


# The README is the same file in both editions; here its links to a page that has a Chinese twin
# (docs/teaching.md -> docs/zh/teaching.md) go to the twin, the others stay on the English page.
_README_LINK = re.compile(r"\]\(((?:docs|notebooks)/)([^)#/]+\.(?:md|ipynb))(#[^)]*)?\)")


def _twin_links(app, docname, source):
    if docname != "README":
        return
    def twin(match):
        folder, name, anchor = match[1], match[2], match[3] or ""
        exists = (pathlib.Path(app.srcdir) / folder / "zh" / name).exists()
        return f"]({folder}zh/{name}{anchor})" if exists else match[0]
    source[0] = _README_LINK.sub(twin, source[0])


_english_setup = setup


def setup(app):
    _english_setup(app)
    app.connect("source-read", _twin_links)
