"""The gettext catalogs (PO files, read and written with Babel): one per notebook and per docs page.

`template` makes a catalog of the English messages, untranslated. `merge` brings an existing catalog up
to the English text with Babel's `Catalog.update` (msgmerge's rules: a changed message keeps its old
translation, marked fuzzy, with the previous msgid; a vanished one becomes obsolete, `#~` in the file),
after first pairing messages that Babel's similarity match could miss or get wrong: the same text under
a new context (a block moved, a cell's id renewed) keeps its translation as it was; the same context
with new text (a cell edited) keeps it, fuzzy.
"""
import io
import pathlib
import re

from babel.messages.catalog import Catalog
from babel.messages.pofile import PoFileError, denormalize, normalize, read_po, write_po

LOCALE_NAME = "zh_CN"
HEADER = """\
# Chinese (zh_CN) translation of {source} (tiledlab's Chinese edition).
# One message per {unit}.
# Made and refreshed by `python -m tools translate update`. Translate
# each msgstr; keep its markdown structure, code, link targets and numbers;
# clear the fuzzy flag once a changed message is reviewed."""


def template(messages, domain, source, unit):
    """A catalog of `messages` ((context, msgid, where) from sources), all untranslated."""
    catalog = Catalog(locale=LOCALE_NAME, domain=domain, project="tiledlab", fuzzy=False,
                      header_comment=HEADER.format(source=source, unit=unit))
    for context, msgid, where in messages:
        catalog.add(msgid, context=context, locations=[(source, where)])
    return catalog


_PO_LINE = re.compile(r'\s*(#.*|((msgctxt|msgid|msgid_plural|msgstr(\[\d+\])?)\s+)?"([^"\\]|\\.)*"\s*)?')


def syntax_problem(data):
    """The first line of PO text `data` (bytes) that is not a comment, a keyword with a quoted string, or a
    quoted continuation, as "line N: ..."; None when every line is one. (Babel reads an unterminated string
    by dropping its last character, and skips other bad lines with a warning.)"""
    for n, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not _PO_LINE.fullmatch(line):
            return f"line {n}: {line.strip()[:60]!r}"
    return None


def read(path):
    """The catalog at `path`, or a ValueError that says where it is not valid PO (read as it is, `update`
    would write the catalog back without the messages Babel skipped)."""
    data, fix = pathlib.Path(path).read_bytes(), "every string in double quotes, each msgid followed by its msgstr"
    try:
        problem = syntax_problem(data)
        catalog = None if problem else read_po(io.BytesIO(data), locale=LOCALE_NAME, domain=path.stem,
                                               abort_invalid=True)
    except UnicodeDecodeError as error:
        problem, fix = f"not UTF-8 ({error.reason})", "save it as UTF-8"
    except PoFileError as error:
        problem = str(error).rsplit(" on ", 1)[0][:80]
    if problem:
        raise ValueError(f"{path}: not a valid catalog, {problem}: {fix}")
    for m in [*catalog, *catalog.obsolete.values()]:
        _take_previous(m)
    return catalog


def _take_previous(message):
    """Babel writes a fuzzy message's previous msgid (`#| msgid ...`) but reads it as a user comment:
    read it back into `previous_id`."""
    lines = [c[1:].strip() for c in message.user_comments if c.startswith("|")]
    if not lines:
        return
    message.user_comments = [c for c in message.user_comments if not c.startswith("|")]
    ids, current = [], None
    for line in lines:
        keyword, _, rest = line.partition(" ")
        if keyword in ("msgid", "msgid_plural"):
            current = [rest]
            ids.append(current)
        elif keyword == "msgctxt":
            current = None  # a previous context: Babel keeps none
        elif line.startswith('"') and current is not None:
            current.append(line)
    message.previous_id = [denormalize("\n".join(parts)) for parts in ids]


def text(catalog, width=76):
    """The PO file's bytes: messages in source order, a fuzzy message's previous msgid (`#| msgid`)
    before it, obsolete ones at the end."""
    out = io.BytesIO()
    write_po(out, catalog, width=width, sort_output=False)  # Babel's own `#|` flattens multi-line msgids
    entries = out.getvalue().decode(catalog.charset).split("\n\n")  # an entry holds no blank line
    messages = [m for m in catalog if m.id]
    if len(entries) != 2 + len(messages) + len(catalog.obsolete):  # the header, ..., "" after the last
        raise RuntimeError("the PO file's entries do not line up with the catalog's messages")
    for i, m in enumerate(messages, 1):
        if m.previous_id:
            entries[i] = _with_previous(entries[i], m.previous_id[0], width)
    return "\n\n".join(entries).encode(catalog.charset)


def _with_previous(entry, previous, width):
    lines = entry.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(("msgctxt ", "msgid ")))
    return "\n".join(lines[:at] + [f"#| msgid {normalize(previous, prefix='#| ', width=width)}"] + lines[at:])


def content(catalog):
    """What a catalog says, whatever the width its lines were wrapped at (a translator's editor keeps long ones)."""
    return [(m.context, m.id, m.string, sorted(m.flags), m.previous_id, m.user_comments, m.locations)
            for m in [*catalog, *catalog.obsolete.values()]]


def keys(catalog):
    """(context, msgid) of each active message, in order: what the English source must give."""
    return [(m.context, m.id) for m in catalog if m.id]


def translations(catalog):
    """{(msgid, context): msgstr} of the messages translated and not fuzzy (gettext ignores fuzzy ones)."""
    return {(m.id, m.context): m.string for m in catalog if m.id and m.string and not m.fuzzy}


def merge(old, new):
    """`old` brought up to the template `new`, losing no translation (see the module's docstring)."""
    _pair_by_text_then_context(old, new)
    previous = {(m.id, m.context): m.previous_id for m in old if m.id and m.previous_id}
    old.update(new, update_creation_date=False)
    for m in old:  # Babel drops the previous msgid of a message still fuzzy from an earlier update
        if m.id and m.fuzzy and not m.previous_id and (m.id, m.context) in previous:
            m.previous_id = previous[(m.id, m.context)]
    for key in [key for key, m in old.obsolete.items() if not m.string]:  # nothing there to reuse
        del old.obsolete[key]
    old.fuzzy = False
    return old


def _pair_by_text_then_context(old, new):
    """Give each template message that `old` lacks exactly the translation it should inherit."""
    wanted = [(m.id, m.context) for m in new if m.id]
    spare = [m for m in old if m.id and (m.id, m.context) not in set(wanted)]
    by_text = {}
    for m in [*spare, *old.obsolete.values()]:
        by_text.setdefault(m.id.strip(), m)
    by_context = {m.context: m for m in spare if m.context}  # a message without one has no place
    used, lacking = set(), [(msgid, context) for msgid, context in wanted if old.get(msgid, context=context) is None]
    for msgid, context in lacking:  # every text found again first: a paragraph put in moves no other's translation
        same_text = by_text.get(msgid.strip())
        if same_text is not None and id(same_text) not in used:
            _move(old, same_text, msgid, context, fuzzy=same_text.fuzzy)
            used.add(id(same_text))
    for msgid, context in lacking:  # then a changed text takes the translation of the one in its place, as fuzzy
        same_place = by_context.get(context)
        if old.get(msgid, context=context) is None and same_place is not None and id(same_place) not in used \
                and same_place.string:
            _move(old, same_place, msgid, context, fuzzy=True)
            used.add(id(same_place))


def _move(catalog, message, msgid, context, fuzzy):
    """Re-file `message`'s translation under (msgid, context); fuzzy keeps the text it translated."""
    obsolete = [key for key, m in catalog.obsolete.items() if m is message]
    for key in obsolete:
        del catalog.obsolete[key]
    if not obsolete:
        catalog.delete(message.id, context=message.context)
    flags = set(message.flags) | ({"fuzzy"} if fuzzy else set())
    previous = message.previous_id or ([message.id] if fuzzy and message.id != msgid else [])
    catalog.add(msgid, message.string, context=context, flags=flags, previous_id=previous,
                user_comments=message.user_comments)
