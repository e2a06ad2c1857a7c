"""Sphinx configuration for the tiledlab website.

Build (from the repository root; never executes a notebook, shows the committed H200 outputs):

    python -m sphinx -W --keep-going -E -c docs -d build/doctrees -b html . build/site

-W --keep-going: every warning fails the build, all of them reported. -E: read every page each time, so
warnings are never hidden by an incremental build. -d build/doctrees: keep Sphinx's pickles out of the
published folder (by default they go to build/site/.doctrees). MyST-NB writes the images it extracts to
build/jupyter_execute (beside the output folder); the site itself is build/site (open
build/site/index.html, or serve it: python -m http.server -d build/site).

The source directory is the repository root so that the pages come straight from notebooks/*.ipynb
(no copies, no symlinks); `include_patterns` limits Sphinx to docs/ and notebooks/.
"""
import pathlib

project = "tiledlab"
author = "tiledlab authors"
copyright = "2026 tiledlab authors. Code: MIT licence; text and figures: CC BY 4.0"
try:
    from importlib.metadata import version as _version
    release = _version("tiledlab")
except Exception:  # not installed: the site still builds
    release = ""

extensions = ["myst_nb"]

# The series' start page lives in docs/; the lessons are the committed notebooks themselves.
root_doc = "docs/index"
include_patterns = ["docs/**", "notebooks/*.ipynb", "README.md"]
exclude_patterns = ["**/.ipynb_checkpoints", "docs/_extra/**", "docs/_static/**", "docs/zh/**", "docs/site_zh/**"]

# --- MyST-NB: show the stored outputs, never run a kernel ---------------------------------------
nb_execution_mode = "off"
nb_merge_streams = True            # one block per stdout run, as in JupyterLab
nb_output_stderr = "warn"          # a stored stderr output is a warning, so (with -W) fails the build
# text/html wins over text/latex for the kernel listings (IPython.display.Code has both).
# Widgets (the tile stepper): the site shows static frames, never a live widget. MyST-NB ranks a widget
# view above everything else in an output bundle (so the bundle's own fallback is never shown; a bare
# widget view renders as nothing) and, when widget state is stored, loads require.js and the ipywidgets
# manager from CDNs (offline: console errors). Drop the widget view for HTML and load no widget
# JavaScript: the page shows the bundle's fallback, e.g. the stepper's text/plain line "Tile stepper
# (interactive in JupyterLab): the frames above show every phase." under its static strip.
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_ipywidgets_js = {}
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# --- HTML -----------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "tiledlab: why tiling cuts global loads, measured"
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": True,     # .ipynb download of each lesson
    "use_fullscreen_button": False,
    "use_repository_button": False,  # no repository URL yet: add repository_url and set True
    "home_page_in_toc": True,
}
# Light mode only: the stored outputs (matplotlib PNGs, the kernel listings' own <style>) are drawn for
# a white page. Setting it also avoids pydata-sphinx-theme's console.error "Got invalid theme mode: ."
# on a first visit (empty localStorage), which the browser test would report.
html_context = {"default_mode": "light"}
# With a declared icon Chromium does not ask for /favicon.ico (a 404 in the browser console).
html_favicon = "_static/favicon.svg"
html_static_path = []
html_extra_path = ["_extra"]         # index.html at the site root: a redirect to docs/index.html
html_last_updated_fmt = None
html_copy_source = True              # _sources/…ipynb for the download button
html_show_sourcelink = False
# Search works offline, opened from disk (file://) as well as served: the index is a <script>
# (searchindex.js), which file:// allows, but each result's summary is fetched from its page, which a
# browser refuses over file:// (a CORS error per result). Results list titles only.
html_show_search_summary = False
# Math: Sphinx puts MathJax (from a CDN) only on pages that have math. No notebook has $…$ math today, so
# no page loads anything from outside the site; once one does, the site's browser test reports the
# request where the CDN cannot be reached (bundle MathJax then, e.g. with sphinx-mathjax-offline).


# --- The two editions: each page links to the same page of the other ----------------------------------
# The Chinese site (docs/site_zh/conf.py, built into zh/ of this one) has docs/zh/... and notebooks/zh/...
# for docs/... and notebooks/...; README is in both.
edition = "en"


def _other_edition(pagename, edition, srcdir):
    """(relative link from page `pagename` to its twin in the other edition, the link's text); a page with
    no twin (docs/classroom, the search page) links to the other edition's start page."""
    up = "../" * pagename.count("/")
    if edition == "en":
        twin = pagename.replace("docs/", "docs/zh/", 1).replace("notebooks/", "notebooks/zh/", 1)
        prefix, text, start = f"{up}zh/", "中文版", "docs/zh/index"
    else:
        twin = pagename.replace("docs/zh/", "docs/", 1).replace("notebooks/zh/", "notebooks/", 1)
        prefix, text, start = f"{up}../", "English", "docs/index"
    exists = any((pathlib.Path(srcdir) / f"{twin}{ext}").exists() for ext in (".md", ".ipynb"))
    return f"{prefix}{twin if exists else start}.html", text


def _edition_switch(app, pagename, templatename, context, doctree):
    if doctree is None or "body" not in context:  # search, genindex: no twin page
        return
    href, text = _other_edition(pagename, app.config.edition, app.srcdir)
    context["body"] = f'<p class="edition-switch"><a href="{href}" hreflang="{"zh-CN" if text != "English" else "en"}">{text}</a></p>\n' + context["body"]


def setup(app):
    app.add_config_value("edition", "en", "html")
    app.connect("html-page-context", _edition_switch)
