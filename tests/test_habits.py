"""The code's habits: lint clean, one public API table, no import cycles, no private imports."""
import ast
import subprocess
import sys
from pathlib import Path

import collectives_lib as cl

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "collectives_lib"


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format",
                           "concise", "collectives_lib", "tests", "benchmarks"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_chapters_have_no_unused_or_repeated_imports():
    """Pyflakes' checks over the chapters' code cells (a first cell once read
    ``from collectives_lib.book import glue, table, table, table, table, table``)."""
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F",
                           "--output-format", "concise", "notebooks"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_public_api_is_one_table():
    names = [n for _, section in cl.toc for n in section]
    assert cl.__all__ == names and len(set(names)) == len(names)
    for name in names:
        assert getattr(cl, name) is not None, name
    # the API is small: about forty names besides the modules
    modules = dict(cl.toc)["Modules"]
    assert 35 <= len(names) - len(modules) <= 50


def _modules():
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        out[name] = path
    return out


def _imports(name: str, path: Path):
    """(target module, imported name) for every ``from ... import`` in a module."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                yield target, alias.name


def test_no_module_imports_another_modules_private_names():
    mods = _modules()
    bad = [f"{name} imports {target}.{imported}"
           for name, path in mods.items() for target, imported in _imports(name, path)
           if target in mods and target != name and imported.startswith("_")
           and not imported.endswith("__") and f"{target}.{imported}" not in mods]
    assert not bad, bad


def test_no_import_cycles():
    mods = _modules()
    graph = {m: set() for m in mods}
    for name, path in mods.items():
        for target, imported in _imports(name, path):
            full = f"{target}.{imported}"
            dst = full if full in mods else target if target in mods else None
            if dst and dst != name and dst != "collectives_lib":
                graph[name].add(dst)
    state = {}

    def visit(u, stack):
        state[u] = "open"
        for v in graph[u]:
            if state.get(v) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(v):] + [v]))
            if v not in state:
                visit(v, stack + [v])
        state[u] = "done"

    for m in graph:
        if m not in state:
            visit(m, [m])
