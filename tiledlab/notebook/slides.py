"""One slide deck built from the series: `python -m tiledlab slides --out DIR` writes DIR/slides.html.

Per notebook: its title with what it teaches (the "You will learn" list, or the start page's opening
paragraph), its takeaway figure (takeaways.py), and its summary. One self-contained HTML file: the
figures are embedded as PNG data, the styles and the script are inline, nothing is fetched from a
network (nbconvert's reveal.js slides load reveal.js from a CDN unless a copy is vendored; this deck
needs neither). Arrow keys, Page Up/Down, space, Home and End move through it; the address keeps the
slide's number (#3); printing gives one slide per page.
"""
import base64
import html
import io
import pathlib
import re

from .lab import lessons, read_notebook

LEARN = re.compile(r"^\*\*You will learn\*\*\n(.*?)(?:\n\n|\Z)", re.M | re.S)
SUMMARY = re.compile(r"^## Summary\n(.*?)(?=^## |\Z)", re.M | re.S)


INLINE = [(re.compile(r"`([^`]+)`"), r"<code>\1</code>"), (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
          (re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])"), r"<em>\1</em>")]


def _inline(text):
    """Escape, then code spans, bold and italics (code first, so its text stays as typed)."""
    parts = re.split(r"(`[^`]+`)", html.escape(text, quote=False))
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{part[1:-1]}</code>")
        else:
            for pattern, repl in INLINE[1:]:
                part = pattern.sub(repl, part)
            out.append(part)
    return "".join(out)


def _markdown(text):
    """The little Markdown of the lessons' opening and summary cells: paragraphs and "- " lists
    (continued on indented lines), with code spans, bold and italics."""
    blocks = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        if lines and lines[0].startswith("- "):
            items = []
            for line in lines:
                if line.startswith("- "):
                    items.append(line[2:])
                else:
                    items[-1] += " " + line.strip()
            blocks.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
        else:
            blocks.append(f"<p>{_inline(' '.join(l.strip() for l in lines))}</p>")
    return "\n".join(blocks)


def content(path):
    """{title, learn, summary} of one notebook, as Markdown, from its cells."""
    cells = [c.source for c in read_notebook(path).cells if c.cell_type == "markdown"]
    title = cells[0].splitlines()[0].lstrip("# ").strip()
    learn = LEARN.search(cells[0])
    opening = cells[0].split("\n\n")[1] if "\n\n" in cells[0] else ""
    summary = next((m[1].strip() for m in map(SUMMARY.search, cells) if m), "")
    return {"title": title, "learn": learn[1].strip() if learn else opening, "summary": summary}


def _png(fig):
    import matplotlib.pyplot as plt
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def slides(notebooks=None, figures=None):
    """The deck's slides, in order: (kind, heading, body HTML)."""
    from . import takeaways
    notebooks = lessons() if notebooks is None else notebooks
    figures = takeaways.figures() if figures is None else figures
    deck = [("title", "Why shared-memory tiling cuts global-memory loads",
             "<p>tiledlab: a Numba-CUDA notebook series, in slides built from its notebooks.</p>"
             "<p class='hint'>→ / ← or space to move; P to print</p>")]
    for path in notebooks:
        text = content(path)
        deck.append(("lesson", text["title"], _markdown(text["learn"])))
        fig = figures.get(pathlib.Path(path).stem)
        if fig is not None:
            alt = html.escape(f"takeaway figure of {text['title']}", quote=True)
            deck.append(("figure", text["title"], f'<img alt="{alt}" src="data:image/png;base64,{_png(fig)}">'))
        if text["summary"]:
            deck.append(("summary", f"{text['title']}: summary", _markdown(text["summary"])))
    return deck


STYLE = """
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; background: #222; font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; }
.slide { display: none; position: absolute; inset: 0; margin: auto; width: min(100vw, 177.78vh);
  height: min(100vh, 56.25vw); background: #fff; color: #111; padding: 3.5% 5%; overflow: hidden;
  font-size: min(2.6vw, 4.6vh); flex-direction: column; }
.slide.current { display: flex; }
.slide h1 { font-size: 1.6em; margin: 0 0 0.6em; color: #0b3d6b; }
.slide.title { justify-content: center; text-align: center; }
.slide.title h1 { font-size: 2em; }
.slide.figure { padding: 2% 3%; }
.slide.figure h1, .slide.summary h1 { font-size: 1.1em; margin-bottom: 0.3em; }
.slide img { flex: 1; min-height: 0; object-fit: contain; width: 100%; }
.slide li { margin: 0.3em 0; line-height: 1.3; }
.slide code { font-size: 0.9em; background: #f2f2f2; padding: 0 0.2em; }
.hint { color: #777; font-size: 0.7em; }
.number { position: absolute; right: 2%; bottom: 2%; font-size: 0.55em; color: #888; }
@media print {
  @page { size: 13.333in 7.5in; margin: 0; }
  html, body { background: #fff; height: auto; }
  .slide { display: flex !important; position: relative; width: 13.333in; height: 7.5in; font-size: 24pt;
    page-break-after: always; break-after: page; }
  .hint { display: none; }
}
"""
SCRIPT = """
const slides = Array.from(document.querySelectorAll('.slide'));
let current = 0;
function fit(s) {  // shrink a long slide's text until it fits (slides keep their 16:9 box)
  s.style.fontSize = '';
  let size = parseFloat(getComputedStyle(s).fontSize);
  while (s.scrollHeight > s.clientHeight + 1 && size > 6) { size *= 0.95; s.style.fontSize = size + 'px'; }
}
function show(n) {
  current = Math.max(0, Math.min(slides.length - 1, n));
  slides.forEach((s, i) => s.classList.toggle('current', i === current));
  fit(slides[current]);
  history.replaceState(null, '', '#' + (current + 1));
}
window.addEventListener('resize', () => fit(slides[current]));
window.addEventListener('beforeprint', () => slides.forEach(fit));
window.addEventListener('afterprint', () => show(current));
document.addEventListener('keydown', e => {
  if (['ArrowRight', 'ArrowDown', 'PageDown', ' ', 'Enter'].includes(e.key)) { show(current + 1); e.preventDefault(); }
  else if (['ArrowLeft', 'ArrowUp', 'PageUp', 'Backspace'].includes(e.key)) { show(current - 1); e.preventDefault(); }
  else if (e.key === 'Home') show(0);
  else if (e.key === 'End') show(slides.length - 1);
  else if (e.key === 'p' || e.key === 'P') window.print();
});
document.addEventListener('click', e => show(current + (e.clientX > window.innerWidth / 3 ? 1 : -1)));
show((parseInt(location.hash.slice(1), 10) || 1) - 1);
"""


def deck_html(deck):
    """The slides as one self-contained HTML page."""
    sections = "\n".join(
        f'<section class="slide {kind}" data-kind="{kind}"><h1>{html.escape(heading)}</h1>{body}'
        f'<div class="number">{k} / {len(deck)}</div></section>'
        for k, (kind, heading, body) in enumerate(deck, 1))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
            f"<title>tiledlab: the series in slides</title><style>{STYLE}</style></head>\n"
            f"<body>\n{sections}\n<script>{SCRIPT}</script></body></html>\n")


def write(out):
    """Write out/slides.html; return its path."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "slides.html"
    path.write_text(deck_html(slides()), encoding="utf-8")
    return path
