"""update (the catalogs from the English sources) and build (the Chinese edition from the catalogs)."""
import collections
import datetime
import pathlib

from . import catalogs, generate, sources

#: One English source and its catalog: its path and catalog path (relative to the root), and a template.
Unit = collections.namedtuple("Unit", "source catalog template")


CELL, BLOCK = ("markdown cell (msgctxt: the cell's id) or code comment (msgctxt: cell id#n)",
                "top-level markdown block; msgctxt is page:n")
CODE = ("literal a notebook's code prints or draws, for all notebooks, no msgctxt; a msgstr equal to its\n"
        "# msgid keeps the literal as written (data, a unit, a name); an f-string's {fields} stay as written.\n"
        "# Messages with msgctxt \"data\" are values of the data that tables show, written by hand and kept")
DATA = "data"  # tiledlab.i18n.DATA


def units(root):
    """A Unit for every English notebook, then for each docs page, then the notebooks' code strings."""
    root = pathlib.Path(root)
    notebooks = {path: sources.read_notebook(path) for path in sources.english_notebooks(root)}
    found = [_unit(root, path, "notebooks", sources.notebook_messages(nb), CELL) for path, nb in notebooks.items()]
    if not found:
        raise ValueError(f"no English notebooks in {root / sources.NOTEBOOKS}: run this in the repository's "
                         "root folder, or give --root")
    found += [_unit(root, path, "docs", sources.page_messages(path.stem, path.read_text(encoding="utf-8")),
                    BLOCK) for path in sources.doc_pages(root)]
    return found + [code_unit(root, notebooks)]


def code_unit(root, notebooks):
    """The Unit of every notebook's code strings: one message per msgid, each place it is written; and
    the values of the data that tables and figures show (msgctxt "data"), kept as the catalog has them."""
    template = catalogs.template([], sources.CODE_CATALOG.stem, sources.NOTEBOOKS.as_posix(), CODE)
    path = pathlib.Path(root) / sources.CODE_CATALOG
    for m in catalogs.read(path) if path.exists() else ():
        if m.id and m.context == DATA:
            template.add(m.id, context=DATA, locations=m.locations, user_comments=m.user_comments)
    for path, nb in notebooks.items():
        where = path.relative_to(root).as_posix()
        for msgid, cell in sources.code_strings(nb):
            message = template.get(msgid) or template.add(msgid)
            message.locations.append((where, cell))
    return Unit(sources.NOTEBOOKS, sources.CODE_CATALOG, template)


def is_code(unit):
    return unit.catalog == sources.CODE_CATALOG


def _unit(root, path, kind, messages, unit):
    source = path.relative_to(root)
    return Unit(source, sources.LOCALE / kind / f"{path.stem}.po",
                catalogs.template(messages, path.stem, source.as_posix(), unit))


def catalog_of(root, unit):
    """The unit's catalog as committed, or None when there is none yet."""
    path = pathlib.Path(root) / unit.catalog
    return catalogs.read(path) if path.exists() else None


def updated(root, unit):
    """The unit's catalog brought up to its English source (a new one when there is none)."""
    old = catalog_of(root, unit)
    if old is None:
        unit.template.creation_date = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        return unit.template
    return catalogs.merge(old, unit.template)


def update(root):
    """Write or refresh every catalog; a catalog already up to date is left untouched. One line each."""
    report = []
    for unit in units(root):
        catalog, path = updated(root, unit), pathlib.Path(root) / unit.catalog
        data = catalogs.text(catalog)
        changed = not path.exists() or (path.read_bytes() != data
                                        and catalogs.content(catalogs.read(path)) != catalogs.content(catalog))
        if changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        active = [m for m in catalog if m.id]
        report.append(f"{unit.catalog.as_posix()}: {'written' if changed else 'up to date'} "
                      f"({len(active)} messages, {sum(not m.string for m in active)} untranslated, "
                      f"{sum(bool(m.fuzzy and m.string) for m in active)} fuzzy, {len(catalog.obsolete)} obsolete)")
    return report


def generated(root):
    """{path relative to root: text (bytes for the compiled code catalog)} of everything the Chinese
    edition is, and the messages left in English (catalog path, context) for want of a translation."""
    root, files, english = pathlib.Path(root), {}, []
    for unit in units(root):
        catalog = catalog_of(root, unit)
        if is_code(unit):
            if catalog is not None:
                from ..code_catalog import compile_catalog
                files[unit.catalog.with_suffix(".mo")] = compile_catalog(root / unit.catalog, mo=None)
            missing = [] if catalog is None else [m.id for m in catalog if m.id and (not m.string or m.fuzzy)]
        elif unit.source.suffix == ".ipynb":
            zh = root / sources.ZH_NOTEBOOKS / unit.source.name
            nb, missing = generate.notebook(sources.read_notebook(root / unit.source), catalog,
                                            sources.read_notebook(zh) if zh.exists() else None)
            files[sources.ZH_NOTEBOOKS / unit.source.name] = generate.notebook_text(nb)
        else:
            text, missing = generate.page((root / unit.source).read_text(encoding="utf-8"), catalog,
                                          unit.source.stem)
            files[sources.ZH_DOCS / unit.source.name] = text
        english += [(unit.catalog, context) for context in missing]
    files[sources.ZH_NOTEBOOKS / "LANGUAGE"] = generate.LANGUAGE_FILE
    return files, english


def build(root):
    """Write notebooks/zh/ and docs/zh/; return one line per message left in English."""
    files, english = generated(root)
    for rel, text in files.items():
        path = pathlib.Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8", newline="\n")  # a notebook's text is nbformat.writes's
    return [f"{catalog.as_posix()}: {context} not translated (or fuzzy): English kept"
            for catalog, context in english]
