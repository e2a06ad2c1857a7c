import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _name(spec):
    return re.split(r"[<>=!;\[ ]", spec.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_packages_as_pyproject():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lines = (ROOT / "environment.yml").read_text().split("dependencies:")[1].splitlines()
    conda = {_name(line.split("- ", 1)[1]) for line in lines
             if line.startswith("  - ") and not line.strip().startswith("- pip")}
    assert conda - {"python"} == {_name(d) for d in deps}


def test_ci_runs_the_readme_test_command():
    command = (ROOT / ".ci" / "run").read_text().split("# README's test command:\n")[1].strip()
    assert command in (ROOT / "README.md").read_text()
