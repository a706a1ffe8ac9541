"""Run one chapter as a reader's notebook front end would, and report what it met.

    python notebook_run.py CHAPTER.ipynb REPORT.json

Run by tests/test_colab.py with the Python of a separate environment that
holds Colab's packages. The chapter runs in an empty folder, as a notebook
opened on its own does, in a kernel started from that environment, cell by
cell in order. At each markdown cell its inline expressions (``{eval}`name```)
are evaluated the way JupyterLab's MyST renderer does it, as
``user_expressions`` of an execute request, so the report says whether every
number the prose names exists, and as what, at that point of the chapter,
and how many cells above it a code cell's output showed that number (what a
reader whose markdown cannot evaluate the expression has to go on).

Only nbclient, nbformat and the standard library are used: this file runs
outside the book's environment.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

EVAL = re.compile(r"\{eval\}`([^`]+)`")
SHOWN = re.compile(r"<code>([A-Za-z_][A-Za-z0-9_]*)</code> = ")   # a number in glue's output
# The rule of tests/test_glue_placement.py: a name's first paragraph at most one code
# cell below the output that shows it, a later paragraph at most two cells below.
FIRST_USE_GAP, LATER_USE_GAP = 1, 2
WIDGET = "application/vnd.jupyter.widget-view+json"
CELL_TIMEOUT = 300  # seconds

PROBE = """\
import importlib.util, json, sys
import ipywidgets, matplotlib, numpy
print(json.dumps({"myst_nb": importlib.util.find_spec("myst_nb") is not None,
                  "jupyter_book": importlib.util.find_spec("jupyter_book") is not None,
                  "ipywidgets": ipywidgets.__version__, "numpy": numpy.__version__,
                  "matplotlib": matplotlib.__version__, "python": sys.version.split()[0],
                  "library": __import__("collectives_lib").__file__}))
"""


def _expressions(client, names: list[str]) -> dict:
    """Evaluate ``names`` in the kernel as user_expressions; return the reply's results."""
    msg_id = client.kc.execute("", silent=True, store_history=False,
                               user_expressions={n: n for n in names})
    try:
        from jupyter_core.utils import run_sync
    except ImportError:  # older jupyter_core: nbclient's own
        from nbclient.util import run_sync
    get_reply = run_sync(client.kc.get_shell_msg)
    deadline = time.monotonic() + 120   # generous: a loaded machine may be slow to answer
    while True:
        reply = get_reply(timeout=max(1.0, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"].get("user_expressions", {})


def run(path: Path) -> dict:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    work = Path(tempfile.mkdtemp(prefix="chapter-"))
    report = {"chapter": path.stem, "errors": [], "stderr": [], "evals": 0,
              "eval_problems": [], "far_numbers": [], "explorers": [], "seconds": None}
    shown_at: dict[str, int] = {}          # name -> last code cell whose output showed it
    seen: set[str] = set()
    started = time.monotonic()
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(work)}})
    try:
        with client.setup_kernel():
            probe = nbformat.v4.new_code_cell(PROBE)
            # nbclient stores an executed cell at its index: give the probe a slot of
            # its own, or it replaces the chapter's last cell (and its inline expressions)
            nb.cells.append(probe)
            client.execute_cell(probe, len(nb.cells) - 1)
            nb.cells.pop()
            text = "".join(o.get("text", "") for o in probe.outputs if o.get("name") == "stdout")
            report["probe"] = json.loads(text)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "markdown":
                    names = list(dict.fromkeys(EVAL.findall(cell.source)))
                    if not names:
                        continue
                    report["evals"] += len(names)
                    for name in names:
                        first = name not in seen
                        seen.add(name)
                        where = shown_at.get(name)
                        between = [] if where is None else [nb.cells[j].cell_type for j in range(where + 1, index)]
                        if where is None:
                            report["far_numbers"].append(f"cell {index}: no output above shows {name}")
                        elif first and (len(between) > FIRST_USE_GAP or "markdown" in between):
                            report["far_numbers"].append(f"cell {index}: {name} first shown {len(between)} cells above")
                        elif not first and len(between) > LATER_USE_GAP:
                            report["far_numbers"].append(f"cell {index}: {name} last shown {len(between)} cells above")
                    for name, result in _expressions(client, names).items():
                        if result.get("status") != "ok":
                            report["eval_problems"].append(
                                f"cell {index}: {{eval}}`{name}` gave {result.get('ename')}: {result.get('evalue')}")
                            continue
                        shown = result.get("data", {}).get("text/plain", "")
                        if not shown or shown[0] in "'\"" or shown.startswith("<"):
                            report["eval_problems"].append(f"cell {index}: {{eval}}`{name}` shows {shown[:60]!r}")
                    continue
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError as exc:
                    report["errors"].append(f"cell {index}: {str(exc)[-1500:]}")
                    break
                for out in cell.outputs:
                    for name in SHOWN.findall(out.get("data", {}).get("text/html", "")):
                        shown_at[name] = index
                    if out.get("output_type") == "stream" and out.get("name") == "stderr":
                        report["stderr"].append(f"cell {index}: {out.get('text', '')[:500]}")
                    plain = out.get("data", {}).get("text/plain", "")
                    if plain.startswith("Explorer("):
                        report["explorers"].append({"cell": index, "live": WIDGET in out.get("data", {})})
    except Exception as exc:  # a dead kernel, a timeout: report it, never hang
        report["errors"].append(f"{type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


if __name__ == "__main__":
    notebook, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.write_text(json.dumps(run(notebook), indent=1))
