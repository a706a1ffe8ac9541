"""Binder's reader environment (binder/): runtime packages only, in versions that
agree with the project's pins and with Binder's base image, no heavy package
that only one chapter needs (that chapter's first cell installs it when it is
missing), and a library installed from the repository after the cached
dependency layer, leaving nothing behind in the reader's home."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT, notebook_pages

BINDER = ROOT / "binder"

#: What repo2docker's base environment for Python 3.11 already holds, from
#: repo2docker/buildpacks/conda/environment.py-3.11-linux-64.lock in
#: https://github.com/jupyterhub/repo2docker at commit 808ae6b (2026-08-21).
BASE_IMAGE = {"notebook": "7.4.7", "jupyter_server": "2.17.0", "ipykernel": "7.0.1",
              "ipython": "9.6.0", "jupyterhub": "5.4.0"}

#: Test, build and browser tooling: none of it belongs in a reader's environment.
TOOLING = {"pytest", "pytest-xdist", "hypothesis", "ruff", "playwright", "jupyter-book", "sphinx",
           "myst-nb", "sphinx-book-theme", "nbclient", "pyyaml", "django-static-mathjax"}

#: Packages too heavy for every reader's image when a single chapter needs them.
HEAVY = {"jax", "jaxlib", "scipy", "torch", "tensorflow"}

#: Import names the chapters use that the base image or the library provide.
PROVIDED = {"IPython", "collectives_lib"}
IMPORT_NAMES = {"pillow": "PIL"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(path) -> dict[str, str]:
    """name -> version of each ``name==version`` line; anything else fails the test."""
    pins = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#")[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.+-]*)", line)
        assert m, f"{path.relative_to(ROOT)}:{n}: {line!r} is not a pinned package (name==version)"
        pins[norm(m.group(1))] = m.group(2)
    return pins


def project_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line.split("#")[0].strip())
        if m:
            pins[norm(m.group(1))] = m.group(2)
    return pins


def test_binder_lists_runtime_packages_only():
    pins = requirements(BINDER / "requirements.txt")
    assert not TOOLING & set(pins), f"binder/requirements.txt installs tooling: {sorted(TOOLING & set(pins))}"


def test_binder_pins_agree_with_the_project():
    pins, project = requirements(BINDER / "requirements.txt"), project_pins()
    differ = {k: (v, project[k]) for k, v in pins.items() if k in project and project[k] != v}
    assert not differ, f"binder/requirements.txt and requirements.txt pin different versions: {differ}"
    missing = sorted(set(pins) - set(project))
    assert not missing, f"binder/requirements.txt pins packages the project never tests: {missing}"


INSTALL_IF_MISSING = re.compile(r'find_spec\("(?P<module>\w+)"\) is None:\n(?P<body>(?:    .*\n?)+)')


def installed_when_missing(page: str) -> dict[str, dict[str, str]]:
    """module -> {package: version} a chapter's first cell pip-installs when the module is missing."""
    first = nbformat.read(ROOT / f"{page}.ipynb", as_version=4).cells[0].source
    return {m["module"]: {norm(n): v for n, v in re.findall(r'"([A-Za-z0-9._-]+)==([^"]+)"', m["body"])}
            for m in INSTALL_IF_MISSING.finditer(first)}


def test_binder_carries_no_package_for_one_chapter():
    pins = requirements(BINDER / "requirements.txt")
    assert not HEAVY & set(pins), f"binder/requirements.txt installs {sorted(HEAVY & set(pins))} for every reader"


def test_a_chapter_installs_what_binder_lacks_at_the_projects_versions():
    project, found = project_pins(), {}
    for page in notebook_pages():
        for module, packages in installed_when_missing(page).items():
            assert packages, f"{page}: its first cell installs nothing when {module} is missing"
            found[page] = packages
            differ = {k: (v, project.get(k)) for k, v in packages.items() if project.get(k) != v}
            assert not differ, f"{page}: installs {differ} (chapter, requirements.txt) when {module} is missing"
    assert found, "no chapter installs a package it needs when missing (the JAX chapter should)"


def test_binder_has_every_package_the_chapters_import():
    pins = requirements(BINDER / "requirements.txt")
    available = {IMPORT_NAMES.get(k, k.replace("-", "_")) for k in pins} | PROVIDED
    needed = {}
    for page in notebook_pages():
        own = set(installed_when_missing(page))
        for cell in nbformat.read(ROOT / f"{page}.ipynb", as_version=4).cells[1:]:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                         else [])
                for name in names:
                    root = name.split(".")[0]
                    if root not in sys.stdlib_module_names and root not in own:
                        needed.setdefault(root, page)
    missing = {k: v for k, v in needed.items() if k not in available}
    assert not missing, f"chapters import packages binder/requirements.txt lacks (package: a chapter): {missing}"


def test_binder_installs_the_library_after_the_cached_layer():
    # repo2docker installs requirements.txt before copying the repository only when it
    # names nothing local; the library then comes from postBuild.
    text = (BINDER / "requirements.txt").read_text()
    assert not re.search(r"^\s*(-e|\.|/|git\+|file:)", text, re.M), "binder/requirements.txt names a local package"
    post = BINDER / "postBuild"
    assert post.stat().st_mode & 0o111, "binder/postBuild must be executable"
    assert re.search(r"pip install --no-deps ", post.read_text(), re.M), "postBuild must install the library"
    assert (BINDER / "runtime.txt").read_text().strip() == f"python-{sys.version_info.major}.{sys.version_info.minor}"
    assert not (ROOT / "runtime.txt").exists(), "with binder/ present repo2docker ignores the root's runtime.txt"


@pytest.mark.slow
def test_postbuild_installs_the_library_and_leaves_the_home_clean(tmp_path):
    """Run binder/postBuild as Binder does, in a copy of the repository (the reader's home)
    with a fresh environment's python first on the PATH."""
    import os
    import shutil

    home = tmp_path / "home"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        if (ROOT / name).is_file():
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, home / name)
    before = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    run = subprocess.run([str(home / "binder" / "postBuild")], cwd=home, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, f"postBuild failed:\n{run.stderr[-3000:]}"
    after = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert after == before, f"postBuild left files in the reader's home: {sorted(set(after) - set(before))}"
    # (its dependencies are binder/requirements.txt's, not in this environment: look, don't import)
    probe = "import importlib.util as u; print(u.find_spec('collectives_lib').origin)"
    where = subprocess.run([str(env_dir / "bin" / "python"), "-c", probe],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0 and where.stdout.startswith(str(env_dir)), (where.stdout, where.stderr[-2000:])


@pytest.mark.slow
def test_binder_requirements_resolve_beside_the_base_image(tmp_path):
    """binder/requirements.txt beside the base image, and with them what a chapter installs
    when it is missing (JAX), so that the chapter's install works on Binder too."""
    report = tmp_path / "report.json"
    base = [f"{k}=={v}" for k, v in BASE_IMAGE.items()]
    base += [f"{k}=={v}" for page in notebook_pages() for packages in installed_when_missing(page).values()
             for k, v in packages.items()]
    run = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--dry-run", "--ignore-installed",
         "--quiet", "--report", str(report), "-r", str(BINDER / "requirements.txt"), *base],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"binder/requirements.txt conflicts with Binder's base image:\n{run.stderr[-3000:]}"
    chosen = {norm(i["metadata"]["name"]): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    for name, version in requirements(BINDER / "requirements.txt").items():
        assert chosen[name] == version, (name, chosen[name], version)
    for name, version in BASE_IMAGE.items():
        assert chosen[norm(name)] == version, (name, chosen[norm(name)], version)
