import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _name(spec):
    return re.split(r"[<>=!;\[ ]", spec.strip(), maxsplit=1)[0].lower()


TEST_TOOLS = {"pytest", "pytest-xdist", "pytest-timeout", "nbval"}


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_environment_yml_names_the_same_packages_as_pyproject():
    deps = _project()["dependencies"]
    lines = (ROOT / "environment.yml").read_text().split("dependencies:")[1].splitlines()
    conda = {_name(line.split("- ", 1)[1]) for line in lines
             if line.startswith("  - ") and not line.strip().startswith("- pip")}
    assert conda - {"python"} == {_name(d) for d in deps}


def test_ci_runs_the_readme_test_command():
    command = (ROOT / ".ci" / "run").read_text().split("# README's test command:\n")[1].strip()
    assert command in (ROOT / "README.md").read_text()


def test_test_tools_are_in_the_test_extra_not_in_the_base_install():
    project = _project()
    assert not TEST_TOOLS & {_name(d) for d in project["dependencies"]}
    test = project["optional-dependencies"]["test"]
    assert TEST_TOOLS <= {_name(d) for d in test}
    assert "tiledlab[site,browser]" in test  # the README's test command also builds the site and drives a browser


def test_every_test_runs_under_a_timeout():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < int(options["timeout"]) <= 900 and options["timeout_method"] == "signal"
