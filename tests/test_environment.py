import pathlib
import re
import tomllib

from packaging.specifiers import SpecifierSet

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _name(spec):
    return re.split(r"[<>=!;\[ ]", spec.strip(), maxsplit=1)[0].lower()


def _specs(requirements):
    """{name: version spec} of requirement strings, without extras, markers or comments."""
    specs = {}
    for r in requirements:
        r = r.split("#")[0].split(";")[0].strip()
        specs[_name(r)] = re.sub(r"^[\w.-]+(\[[^\]]*\])?", "", r).strip()
    return specs


TEST_TOOLS = {"pytest", "pytest-xdist", "pytest-timeout", "nbval"}
GPU_EXTRAS = ("cuda12", "cuda13")


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _conda_specs():
    lines = (ROOT / "environment.yml").read_text().split("dependencies:")[1].splitlines()
    return _specs(line.split("- ", 1)[1] for line in lines
                  if line.startswith("  - ") and not line.strip().startswith("- pip"))


def test_environment_yml_names_the_same_packages_as_pyproject():
    deps = _project()["dependencies"]
    assert set(_conda_specs()) - {"python"} == {_name(d) for d in deps}


def test_environment_yml_pins_as_pyproject_with_a_gpu():
    """One conda environment serves the simulator and a GPU: the base pins, numpy capped as the cuda extras cap it."""
    project = _project()
    expected = _specs(project["dependencies"])
    gpu_numpy = {_specs(project["optional-dependencies"][extra])["numpy"] for extra in GPU_EXTRAS}
    assert len(gpu_numpy) == 1
    expected["numpy"] = re.sub(r"<[\d.]+", gpu_numpy.pop(), expected["numpy"])
    conda = _conda_specs()
    conda.pop("python")
    assert conda == expected


def test_numpy_2_5_is_refused_only_by_the_gpu_extras():
    """numba-cuda 0.30 compiles GPU kernels only below numpy 2.5; its simulator runs on 2.5."""
    project = _project()
    assert "2.5.5" in SpecifierSet(_specs(project["dependencies"])["numpy"])
    for extra in GPU_EXTRAS:
        specs = _specs(project["optional-dependencies"][extra])
        assert "numba-cuda" in specs and "2.5.5" not in SpecifierSet(specs["numpy"]) and "2.4.6" in SpecifierSet(specs["numpy"])


def test_ci_runs_the_readme_test_command():
    command = (ROOT / ".ci" / "run").read_text().split("# README's test command:\n")[1].splitlines()[0].strip()
    assert command in (ROOT / "README.md").read_text()


def _newer_pythons():
    """The Pythons .ci/unit-newer runs the unit suite on, after the main run's."""
    return re.search(r'^PYTHONS="([^"]+)"$', (ROOT / ".ci" / "unit-newer").read_text(), re.M)[1].split()


def test_ci_also_runs_the_unit_suite_on_newer_pythons_with_numpy_2_5():
    run = (ROOT / ".ci" / "run").read_text()
    assert run.rstrip().endswith(".ci/unit-newer") and "set -euo pipefail" in run  # after the main run; failing fails CI
    script = (ROOT / ".ci" / "unit-newer").read_text()
    assert "'numpy>=2.5'" in script and "--ignore=tests/browser" in script and "set -euo pipefail" in script


def test_test_tools_are_in_the_test_extra_not_in_the_base_install():
    project = _project()
    assert not TEST_TOOLS & {_name(d) for d in project["dependencies"]}
    test = project["optional-dependencies"]["test"]
    assert TEST_TOOLS <= {_name(d) for d in test}
    assert "tiledlab[site,browser,maintain]" in test  # the test command also builds the site, drives a browser
    # and tests the maintainers' tools and the teacher's, which students do not install
    assert not {"tomlkit", "babel", "markdown-it-py"} & {_name(d) for d in project["dependencies"]}


def test_the_pythons_advertised_are_those_ci_runs():
    """pyproject's classifiers and lower bound, environment.yml and the docs name the versions CI runs:
    the README's command on CI's python3 (3.11, which .ci/run checks) and .ci/unit-newer's."""
    project = _project()
    main = re.search(r"sys\.version_info\[:2\] != \((3), (\d+)\)", (ROOT / ".ci" / "run").read_text())
    ci = [f"{main[1]}.{main[2]}", *_newer_pythons()]
    advertised = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if re.search(r"Python :: 3\.\d+$", c)]
    assert advertised == ci == ["3.11", "3.12", "3.13"]
    assert project["requires-python"] == f">={min(ci)}" and _conda_specs()["python"] == f">={min(ci)}"
    named = f"Python {', '.join(ci[:-1])} or {ci[-1]}"  # what a reader is told, in the pages they read first
    for page in ("README.md", "classroom/student-README.md", "docs/teaching.md"):
        assert named in (ROOT / page).read_text(), page
    for page in ("README.md", "docs/teaching.md", "docs/classroom.md", "classroom/student-README.md"):
        assert not re.search(r"Python 3\.(10|9)\b|3\.11 or newer", (ROOT / page).read_text()), page


def test_every_test_runs_under_a_timeout():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < int(options["timeout"]) <= 900 and options["timeout_method"] == "signal"


def test_the_readmes_two_commands_make_their_own_virtual_environment():
    readme = (ROOT / "README.md").read_text()
    run = "    python3 -m venv .venv && .venv/bin/python -m pip install -e . && .venv/bin/python -m tiledlab lab\n"
    test = "    python3 -m venv .venv && .venv/bin/python -m pip install -e '.[test]' && .venv/bin/python -m pytest\n"
    assert run in readme and test in readme  # a system Python that refuses pip outside a venv runs them too
    assert "py -m venv .venv" in readme  # and Windows users are told what to type
