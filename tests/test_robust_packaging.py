"""Packaging and help (issue 15): one version, the extras the tests and the errors name,
and every verb's help with a description and examples under the name it was started by."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import collectives_lib as cl
from collectives_lib.cli import main

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())


def test_the_version_is_written_once_and_the_command_prints_it():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "collectives_lib.__version__"}
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and out.getvalue() == f"collectives {cl.__version__}\n"


def test_the_test_extra_has_what_the_tests_import():
    names = {re.split(r"[<>=\[ ]", r)[0].lower() for r in PYPROJECT["project"]["optional-dependencies"]["test"]}
    assert {"pytest", "hypothesis", "pyyaml", "nbformat", "matplotlib", "ipywidgets"} <= names


def test_the_extra_the_drawing_error_names_exists_and_brings_matplotlib():
    code = "import sys; sys.modules['matplotlib'] = None; import collectives_lib.draw"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    extra = re.search(r'pip install "collectives_lib\[(\w+)\]"', proc.stderr)
    assert proc.returncode != 0 and extra, proc.stderr
    assert any(r.startswith("matplotlib") for r in PYPROJECT["project"]["optional-dependencies"][extra.group(1)])


@pytest.mark.parametrize("verb", ["estimate", "sweep", "algorithms", "show", "run"])
@pytest.mark.parametrize("prog", ["collectives", "python -m collectives_lib"])
def test_every_verb_has_a_description_and_examples_under_its_own_name(verb, prog):
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main([verb, "--help"], prog=prog)
    text = out.getvalue()
    assert stop.value.code == 0
    assert text.startswith(f"usage: {prog} {verb} ")
    usage, description = text.split("\n\n")[:2]
    assert len(description.split()) >= 10, description
    assert "examples:" in text
    if verb == "run":
        assert f"{prog} run --np 4" in text
