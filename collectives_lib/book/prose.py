"""Numbers for a chapter's prose, wherever the notebook is opened.

The chapters write numbers into their prose with MyST inline expressions,
``{eval}`fl_steps```, which the built site (myst-nb) and JupyterLab
(jupyterlab-myst) replace by the value of the variable ``fl_steps`` in the
kernel. :func:`glue` is how a chapter sets those variables: it stores each
value in the notebook's namespace as text that prints without quotes, and
shows the numbers in the cell's output too, for the readers whose markdown
cannot evaluate expressions (Colab, VS Code): no reader meets a name where a
number belongs. A book build (``COLLECTIVES_BOOK_BUILD=1``) shows no such
output, since the site's prose shows the numbers themselves.

>>> glue(fl_steps=3, fl_W="45 GB/s", show=False)
>>> fl_steps, fl_W                                     # doctest: +SKIP
(3, 45 GB/s)
>>> glue("fl_steps")           # shown again, above a later paragraph  # doctest: +SKIP
fl_steps = 3

Nothing here needs the book's tooling (myst-nb): a chapter runs anywhere the
library is installed.

Introduced in the chapter *A first look*; every chapter uses it.
"""

from __future__ import annotations

import html
import inspect
import os

from ..errors import CollectivesError

#: Environment variable set by a book build (``make book`` and the tests set it):
#: explorers pre-render kernel-free twins, and :func:`glue` shows no output.
BUILD_ENV = "COLLECTIVES_BOOK_BUILD"


def in_book_build() -> bool:
    """Whether this kernel runs inside a book build (``COLLECTIVES_BOOK_BUILD`` set, not ``0``)."""
    return os.environ.get(BUILD_ENV, "") not in ("", "0")


class Text(str):
    """Text that prints as itself (no quotes), so an inline expression shows it plainly."""

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str.__str__(self))


def _namespace(depth: int):
    """The notebook's namespace: IPython's user namespace, else the caller's globals."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:          # pragma: no cover - IPython comes with every kernel
        shell = None
    if shell is not None:
        return shell.user_ns
    return inspect.stack()[depth].frame.f_globals


def glue(*again: str, show: bool = True, **values) -> None:
    """Set each ``name=value`` as a variable for the prose's ``{eval}`name``` and show them.

    Values are turned into :class:`Text` (numbers keep their own ``str``).
    ``show=False`` sets them without output. Call it in the code cell just
    above the paragraph that first uses the names, so that a reader whose
    markdown shows ``{eval}`name``` as it is (Colab, VS Code) finds the number
    right above the sentence.

    Names given without a value are numbers glued before, shown again, for a
    paragraph further down that uses them too: ``glue("fl_steps")``.
    """
    if not again and not values:
        raise CollectivesError("glue needs at least one name=value, or the name of a number glued before")
    ns = _namespace(2)
    shown = {}
    for name in again:
        if not isinstance(name, str) or not isinstance(ns.get(name), Text):
            raise CollectivesError(
                f"glue: {name!r} names no number glued before; glue it with a value first, glue({name}=...)")
        shown[name] = ns[name]
    for name, value in values.items():
        if not name.isidentifier():
            raise CollectivesError(f"glue: {name!r} is not a variable name; use letters, digits and _")
        if name in ns and not isinstance(ns[name], Text):
            raise CollectivesError(
                f"glue: {name!r} already names a {type(ns[name]).__name__} in this notebook; "
                "give the prose's number a name of its own")
        text = Text(value if isinstance(value, str) else _format(value))
        ns[name] = text
        shown[name] = text
    if show and not in_book_build():
        _display(shown)


def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _display(shown: dict) -> None:
    plain = " · ".join(f"{k} = {v}" for k, v in shown.items())
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:          # pragma: no cover
        print(plain)
        return
    if get_ipython() is None:
        print(plain)
        return
    items = "".join(f"<span><code>{html.escape(k)}</code> = {html.escape(v)}</span> "
                    for k, v in shown.items())
    display({"text/plain": plain,
             "text/html": f'<div class="cl-numbers" style="font-size:smaller;color:#57606a">'
                          f"{items}</div>"}, raw=True)

