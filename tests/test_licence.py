"""A teacher may legally reuse the series: the licences are stated where a reader meets them."""
import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_code_is_mit_and_the_material_cc_by():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    content = (ROOT / "LICENSE-CONTENT.md").read_text()
    assert "CC BY 4.0" in content and "creativecommons.org/licenses/by/4.0" in content


def test_the_package_metadata_names_both_licences():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^license = "MIT AND CC-BY-4.0"(\s*#.*)?$', pyproject, re.M)
    assert re.search(r'^license-files = \["LICENSE", "LICENSE-CONTENT.md"\]$', pyproject, re.M)


def test_the_site_footer_and_the_start_page_say_so():
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert "MIT" in conf and "CC BY 4.0" in conf
    start = json.loads((ROOT / "notebooks" / "00_start_here.ipynb").read_text())
    text = "".join("".join(c["source"]) for c in start["cells"] if c["cell_type"] == "markdown")
    assert "MIT" in text and "CC BY 4.0" in text
    assert "## Licence" in (ROOT / "README.md").read_text()
