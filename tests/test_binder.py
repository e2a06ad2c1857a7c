"""The Binder configuration (.binder/) installs what pyproject.toml allows, runs on the simulator, and
its scripts are executable shell."""
import os
import pathlib
import tomllib

import pytest
from packaging.requirements import Requirement

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDER = ROOT / ".binder"


def pins():
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


def test_every_pin_is_exact_and_inside_pyprojects_range():
    wanted = {Requirement(r).name: Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    found = pins()
    assert {p.name for p in found} == set(wanted)  # every dependency pinned, nothing else
    for pin in found:
        (spec,) = pin.specifier
        assert spec.operator == "==", pin
        assert wanted[pin.name].specifier.contains(spec.version), f"{pin} is outside pyproject's {wanted[pin.name]}"


def test_the_python_is_one_that_pyproject_allows():
    version = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert Requirement(f"python{spec}").specifier.contains(version + ".0")


@pytest.mark.parametrize("script", ["postBuild", "start"])
def test_scripts_are_executable_bash(script):
    path = BINDER / script
    assert os.access(path, os.X_OK) and path.read_text().startswith("#!/bin/bash\n")


def test_start_forces_the_simulator_and_runs_the_command():
    text = (BINDER / "start").read_text()
    assert "export TILEDLAB_BACKEND=simulator" in text and text.rstrip().endswith('exec "$@"')
