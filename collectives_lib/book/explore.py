"""Interactive figures for the book: one facility, two faces.

Every chapter draws its interactive figures with the two entry points here:

* :func:`explorer` turns a plain drawing function and a few controls into a
  figure the reader can steer. In a live kernel (JupyterLab, Binder, Colab) it
  shows ipywidgets controls that redraw the figure in place. On the static site,
  where no Python runs, it shows a *twin*: the figure pre-rendered at every
  position of a small grid of control values, switched by plain HTML inputs and
  a few lines of inline JavaScript. The twin needs no network and no kernel.
* :func:`animation` (and :func:`player`) pre-render the frames of a step-by-step
  schedule and show them with play, pause and step buttons, in plain HTML and
  JavaScript, which works the same on the static site, in JupyterLab and in
  Colab.

The drawing contract is deliberately small: ``draw(**values)`` is an ordinary
function of the control values that *returns a new* :class:`matplotlib.figure.Figure`.
The facility renders it to PNG and closes it, so memory does not grow however
often the reader moves a slider. Use :func:`subplots` to make a figure of the
book's standard width that is not registered with pyplot (so nothing is shown
twice and nothing leaks)::

    from collectives_lib.book.explore import explorer, Slider, Dropdown, subplots

    def draw(n, nbytes):
        fig, ax = subplots()
        ax.bar(["ring"], [(n - 1) / n * nbytes / 50e9 * 1e3])
        ax.set_ylabel("time (ms)")
        return fig

    explorer(draw, {
        "n": Slider("ranks N", [2, 4, 8, 16]),
        "nbytes": Slider("size V", [2**20, 2**30], format=lambda b: f"{b / 2**20:g} MiB"),
    })

The static twin is rendered only when it will be used: when the environment
variable ``COLLECTIVES_BOOK_BUILD=1`` is set (``make book`` and the tests set
it) or when the caller passes ``static=True``. Anywhere else only the live
widget is built, so Binder and Colab stay quick. During a book build the live
widget is *not* built: its saved state would carry the PNG a second time and
the static page has no kernel to talk to anyway.

Importing this module imports neither matplotlib nor ipywidgets; they are
imported inside the functions that need them.
"""

from __future__ import annotations

import base64
import hashlib
import html
import inspect
import io
import itertools
import json
import sys
import textwrap
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .prose import BUILD_ENV, in_book_build

__all__ = [
    "BUILD_ENV",
    "FIGURE_WIDTH",
    "DPI",
    "Slider",
    "Dropdown",
    "Explorer",
    "Player",
    "explorer",
    "animation",
    "player",
    "subplots",
    "render_png",
]


#: Width of every book figure in inches. At :data:`DPI` this is 700 pixels,
#: which fits the sphinx-book-theme content column without scaling.
FIGURE_WIDTH = 7.0

#: Default figure height in inches.
FIGURE_HEIGHT = 3.2

#: Resolution of the PNGs, in dots per inch.
DPI = 100

#: Most positions a static twin may pre-render; beyond it, pass ``static=``.
MAX_STATIC_POSITIONS = 64

#: Most bytes of PNG one static twin or player may embed. A chapter page must
#: stay under 2 MB in all, so one figure gets well under that.
MAX_STATIC_BYTES = 1_500_000


# --------------------------------------------------------------------------
# Controls
# --------------------------------------------------------------------------


def _default_format(value: Any) -> str:
    return str(value)


@dataclass(frozen=True)
class _Control:
    label: str
    options: Sequence[Any]
    value: Any = None
    format: Callable[[Any], str] | None = None

    kind = "control"

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"{type(self).__name__} needs a non-empty label, got {self.label!r}")
        options = tuple(self.options)
        if not options:
            raise ValueError(f"{self.kind} {self.label!r} has no options")
        for i, a in enumerate(options):
            if a in options[:i]:
                raise ValueError(f"{self.kind} {self.label!r} lists the option {a!r} twice")
        object.__setattr__(self, "options", options)
        if self.value is None:
            object.__setattr__(self, "value", options[0])
        elif self.value not in options:
            raise ValueError(
                f"{self.kind} {self.label!r}: default {self.value!r} is not one of "
                f"the options {list(options)!r}"
            )
        if self.format is not None and not callable(self.format):
            raise TypeError(f"{self.kind} {self.label!r}: format must be callable, got {self.format!r}")

    def text(self, value: Any) -> str:
        """The label shown for ``value``."""
        return (self.format or _default_format)(value)

    def index(self, value: Any) -> int:
        """Position of ``value`` among the options, or a clear error."""
        for i, option in enumerate(self.options):
            if option == value:
                return i
        raise ValueError(
            f"{value!r} is not one of the options of {self.kind} {self.label!r}: "
            f"{list(self.options)!r}"
        )


@dataclass(frozen=True)
class Slider(_Control):
    """A slider over a discrete list of values, such as ``N in [2, 4, 8, 16]``.

    ``label`` is what the reader sees, ``options`` the values handed to the
    drawing function, ``value`` the starting position (default: the first
    option) and ``format`` turns a value into its label (default: ``str``),
    for example ``lambda b: f"{b / 2**20:g} MiB"`` for sizes in bytes.
    """

    kind = "slider"


@dataclass(frozen=True)
class Dropdown(_Control):
    """A drop-down choice among a few values, such as a link class or an algorithm."""

    kind = "dropdown"


# --------------------------------------------------------------------------
# Figures and PNGs
# --------------------------------------------------------------------------


def subplots(nrows: int = 1, ncols: int = 1, *, height: float = FIGURE_HEIGHT, **kwargs: Any):
    """Like ``plt.subplots`` but for the book: standard width, constrained layout,
    white background, and *not* registered with pyplot (so a figure made for an
    explorer is never shown a second time by the inline backend, and is freed as
    soon as it is rendered). Returns ``(fig, axes)``.

    Redraw speed: a line plot redraws in about 70 ms; log axes spanning many
    decades cost about 100 ms more for their minor ticks, so call
    ``ax.minorticks_off()`` on them in explorers (see benchmarks/bench_explore.py).
    """
    from matplotlib.figure import Figure

    grid = {k: kwargs.pop(k) for k in ("width_ratios", "height_ratios", "sharex", "sharey",
                                       "subplot_kw", "gridspec_kw") if k in kwargs}
    kwargs.setdefault("layout", "constrained")
    fig = Figure(figsize=(FIGURE_WIDTH, height), facecolor="white", **kwargs)
    axes = fig.subplots(nrows, ncols, squeeze=True, **grid)
    return fig, axes


def _close(fig: Any) -> None:
    """Release a figure, whether or not pyplot knows about it."""
    pyplot = sys.modules.get("matplotlib.pyplot")  # never import pyplot ourselves
    if pyplot is not None:
        pyplot.close(fig)
    with warnings.catch_warnings():
        # matplotlib 3.10 warns about limits of shared log axes while clearing them;
        # the figure is being thrown away, so nothing a reader could act on
        warnings.simplefilter("ignore", UserWarning)
        fig.clear()


def render_png(fig: Any, *, dpi: int = DPI, compact: bool = False) -> bytes:
    """Render a matplotlib figure to PNG bytes on a white background and close it.

    ``compact=True`` quantises the image to a 256-colour palette, which makes
    book figures (flat colours, thin lines) two to three times smaller with no
    visible change; the static twins use it to keep pages light.
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(
            "the drawing function must return a matplotlib Figure "
            f"(use collectives_lib.book.explore.subplots()), got {type(fig).__name__}"
        )
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, facecolor="white")
    finally:
        _close(fig)
    data = buf.getvalue()
    if compact:
        from PIL import Image

        img = Image.open(io.BytesIO(data)).convert("RGB")
        small = io.BytesIO()
        img.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(small, format="png", optimize=True)
        if small.tell() < len(data):
            data = small.getvalue()
    return data


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _static_requested() -> bool:
    return in_book_build()


_instance_counter = itertools.count(1)


def _dom_id(prefix: str, payload: Sequence[bytes]) -> str:
    digest = hashlib.sha1()
    for chunk in payload:
        digest.update(chunk)
    return f"{prefix}-{digest.hexdigest()[:10]}-{next(_instance_counter)}"


# Shared look of the twins: a white card, so the PNGs read the same in light
# and dark mode; text inherits the page's colour. The ``dark-light`` class
# tells pydata-sphinx-theme not to dim the images on their own in dark mode;
# the whole card is dimmed a little instead (white would glare on a dark page),
# its black text still black on light grey.
_STYLE = """<style>
.cl-card{max-width:720px;margin:.25rem 0;padding:.5rem .75rem;border:1px solid #c9ced6;border-radius:.4rem;
 background:#fff;color:#1f2328;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:.9rem;line-height:1.4}
.cl-card .cl-title{font-weight:600;margin:0 0 .35rem 0}
.cl-card img.cl-explorer-image,.cl-card img.cl-frame{display:block;max-width:100%;height:auto;margin:.25rem 0;
 background:#fff!important;filter:none!important;padding:0!important;border-radius:0!important}
.cl-card .cl-row{display:flex;align-items:center;gap:.6rem;margin:.2rem 0;flex-wrap:wrap}
.cl-card label{min-width:6.5rem;font-weight:500;margin:0}
.cl-card input[type=range]{flex:1 1 12rem;max-width:22rem;accent-color:#1f6fb2;margin:0}
.cl-card input.cl-scrub{flex:1 1 6rem}
.cl-card output{font-variant-numeric:tabular-nums;min-width:3.5rem}
.cl-card select,.cl-card button{font:inherit;color:#1f2328;background:#f3f5f8;border:1px solid #9aa3ad;
 border-radius:.3rem;padding:.1rem .55rem;cursor:pointer}
.cl-card button:hover,.cl-card select:hover{background:#e3e8ee}
.cl-card button:focus-visible,.cl-card select:focus-visible,.cl-card input:focus-visible{outline:2px solid #1f6fb2;outline-offset:1px}
.cl-card .cl-caption{min-height:1.4em}
.cl-card .cl-note{color:#57606a;font-size:.8rem;margin-top:.2rem}
html[data-theme=dark] .bd-content div.cell_output .text_html:has(> .cl-card){background:transparent!important;padding:0!important}
html[data-theme=dark] .cl-card{filter:brightness(.86)}
</style>"""


# --------------------------------------------------------------------------
# Explorer
# --------------------------------------------------------------------------


class Explorer:
    """A figure steered by controls; see :func:`explorer`.

    Useful attributes for tests and notebooks:

    * ``controls`` -- name -> live ipywidget (built on first use), so
      ``exp.controls["n"].value = 8`` redraws as if the reader moved the slider;
    * ``last_values`` -- the values of the figure currently shown;
    * ``current_png()`` -- the PNG bytes currently shown;
    * ``render(**values)`` -- PNG bytes for any values, from the cache if drawn before;
    * ``static_html()`` -- the kernel-free twin.
    """

    def __init__(
        self,
        draw: Callable[..., Any],
        controls: Mapping[str, Slider | Dropdown],
        *,
        static: bool | Mapping[str, Sequence[Any]] | None = None,
        title: str | None = None,
        alt: str | Callable[..., str] | None = None,
    ) -> None:
        if not callable(draw):
            raise TypeError(f"draw must be a function of the control values, got {draw!r}")
        if not isinstance(controls, Mapping) or not controls:
            raise ValueError("explorer needs at least one control, as a mapping name -> Slider or Dropdown")
        for name, control in controls.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"control name {name!r} must be a Python identifier (it is passed to draw)")
            if not isinstance(control, _Control):
                raise TypeError(f"control {name!r} must be a Slider or a Dropdown, got {control!r}")
        _check_signature(draw, list(controls))
        if alt is not None and not (isinstance(alt, str) or callable(alt)):
            raise TypeError(f"alt must be a string or a function of the control values, got {alt!r}")
        if isinstance(alt, str) and not alt.strip():
            raise ValueError("alt text must not be empty")

        self.draw = draw
        self.specs: dict[str, Slider | Dropdown] = dict(controls)
        self.title = title
        self.alt = alt
        self.static_positions = self._static_grid(static)
        self._force_static = static is True  # a mapping only chooses the positions
        self._static = static
        self._cache: dict[tuple, bytes] = {}
        self._widget = None
        self._widgets: dict[str, Any] = {}
        self._image = None
        self.last_values: dict[str, Any] = {name: spec.value for name, spec in self.specs.items()}
        self.redraw_count = 0

    # -- values ------------------------------------------------------------

    def _key(self, values: Mapping[str, Any]) -> tuple:
        unknown = sorted(set(values) - set(self.specs))
        if unknown:
            raise ValueError(f"unknown control(s) {unknown}; this explorer has {list(self.specs)}")
        missing = [name for name in self.specs if name not in values]
        if missing:
            raise ValueError(f"missing value(s) for control(s) {missing}")
        return tuple(self.specs[name].index(values[name]) for name in self.specs)

    def alt_text(self, **values: Any) -> str:
        """Alt text of the figure drawn at ``values``."""
        self._key(values)
        if callable(self.alt):
            text = self.alt(**values)
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"alt() returned {text!r}; it must return a non-empty string")
            return text
        settings = ", ".join(f"{spec.label} = {spec.text(values[name])}" for name, spec in self.specs.items())
        lead = self.alt or self.title or "Figure"
        return f"{lead} ({settings})"

    def render(self, **values: Any) -> bytes:
        """PNG bytes of the figure at ``values`` (drawn once, then cached)."""
        key = self._key(values)
        if key not in self._cache:
            self._cache[key] = render_png(self.draw(**values))
            self.redraw_count += 1
        return self._cache[key]

    # -- static twin -------------------------------------------------------

    def _static_grid(self, static: Any) -> dict[str, tuple]:
        if static is None or isinstance(static, bool):
            return {name: spec.options for name, spec in self.specs.items()}
        if not isinstance(static, Mapping):
            raise TypeError(
                "static must be None, True, False or a mapping control name -> "
                f"list of positions to pre-render, got {static!r}"
            )
        unknown = sorted(set(static) - set(self.specs))
        if unknown:
            raise ValueError(f"static names unknown control(s) {unknown}; this explorer has {list(self.specs)}")
        grid = {}
        for name, spec in self.specs.items():
            chosen = tuple(static.get(name, spec.options))
            if not chosen:
                raise ValueError(f"static positions for {name!r} are empty")
            for value in chosen:
                spec.index(value)  # raises a clear error for a value that is not an option
            # keep the control's own order, so the twin's slider moves left to right
            grid[name] = tuple(v for v in spec.options if v in chosen)
        return grid

    @property
    def static_enabled(self) -> bool:
        """Whether the mime bundle carries the kernel-free twin."""
        if self._static is False:
            return False
        return self._force_static or _static_requested()

    def static_frames(self) -> list[tuple[dict[str, Any], bytes]]:
        """Every (values, PNG) pair of the static grid, in row-major order of the controls."""
        names = list(self.static_positions)
        count = 1
        for positions in self.static_positions.values():
            count *= len(positions)
        if count > MAX_STATIC_POSITIONS:
            sizes = " x ".join(str(len(p)) for p in self.static_positions.values())
            raise ValueError(
                f"the static twin would pre-render {sizes} = {count} figures (most {MAX_STATIC_POSITIONS}); "
                "pass static={name: [a few values], ...} to pre-render a subset"
            )
        frames = []
        total = 0
        for combo in itertools.product(*self.static_positions.values()):
            values = dict(zip(names, combo))
            key = ("static",) + self._key(values)
            if key not in self._cache:
                self._cache[key] = render_png(self.draw(**values), compact=True)
            png = self._cache[key]
            total += len(png)
            frames.append((values, png))
        if total > MAX_STATIC_BYTES:
            raise ValueError(
                f"the static twin's {count} figures weigh {total / 1e6:.2f} MB (most "
                f"{MAX_STATIC_BYTES / 1e6:.2f} MB); pre-render fewer positions with static=..."
            )
        return frames

    def static_html(self) -> str:
        """The kernel-free twin: pre-rendered PNGs switched by plain HTML inputs."""
        frames = self.static_frames()
        names = list(self.static_positions)
        start = {}
        for name in names:
            default = self.specs[name].value
            positions = self.static_positions[name]
            start[name] = default if default in positions else positions[0]
        start_index = next(i for i, (values, _) in enumerate(frames) if values == start)
        dom_id = _dom_id("cl-explorer", [png for _, png in frames])
        data = {
            "sizes": [len(self.static_positions[n]) for n in names],
            "labels": [[self.specs[n].text(v) for v in self.static_positions[n]] for n in names],
            "frames": [_data_uri(png) for _, png in frames],
            "alts": [self.alt_text(**values) for values, _ in frames],
        }
        rows = []
        for k, name in enumerate(names):
            spec = self.specs[name]
            positions = self.static_positions[name]
            pos = positions.index(start[name])
            input_id = f"{dom_id}-{name}"
            label = f'<label for="{input_id}">{html.escape(spec.label)}</label>'
            if isinstance(spec, Dropdown):
                opts = "".join(
                    f'<option value="{i}"{" selected" if i == pos else ""}>{html.escape(spec.text(v))}</option>'
                    for i, v in enumerate(positions)
                )
                control = f'<select id="{input_id}" data-cl-control="{k}" name="{html.escape(name)}">{opts}</select>'
                rows.append(f'<div class="cl-row">{label}{control}</div>')
            else:
                control = (
                    f'<input type="range" id="{input_id}" data-cl-control="{k}" name="{html.escape(name)}" '
                    f'min="0" max="{len(positions) - 1}" step="1" value="{pos}" '
                    f'aria-valuetext="{html.escape(spec.text(start[name]))}">'
                )
                out = f'<output for="{input_id}" data-cl-label="{k}">{html.escape(spec.text(start[name]))}</output>'
                rows.append(f'<div class="cl-row">{label}{control}{out}</div>')
        title = f'<div class="cl-title">{html.escape(self.title)}</div>' if self.title else ""
        subset = any(len(self.static_positions[n]) < len(self.specs[n].options) for n in names)
        note = (
            '<div class="cl-note">Pre-rendered at a few positions; run the notebook for every value.</div>'
            if subset
            else ""
        )
        script = _EXPLORER_JS.replace("__ID__", dom_id)
        return (
            f'{_STYLE}<div class="cl-card cl-explorer" id="{dom_id}">{title}'
            f'<img class="cl-explorer-image dark-light" src="{data["frames"][start_index]}" '
            f'alt="{html.escape(data["alts"][start_index])}">'
            + "".join(rows)
            + note
            + f'<script type="application/json" class="cl-data">{_json_for_script(data)}</script>'
            + f"<script>{script}</script></div>"
        )

    # -- live widget -------------------------------------------------------

    def _build_widget(self) -> None:
        import ipywidgets as widgets

        for name, spec in self.specs.items():
            options = [(spec.text(v), v) for v in spec.options]
            common = dict(options=options, value=spec.value, description=spec.label,
                          style={"description_width": "initial"}, layout=widgets.Layout(width="480px"))
            if isinstance(spec, Dropdown):
                w = widgets.Dropdown(**common)
            else:
                w = widgets.SelectionSlider(continuous_update=False, **common)
            w.observe(self._on_change, names="value")
            self._widgets[name] = w
        self._image = widgets.Image(
            value=self.render(**self.last_values), format="png",
            layout=widgets.Layout(max_width="100%", height="auto", align_self="flex-start"),
        )
        children = []
        if self.title:
            children.append(widgets.HTML(f"<b>{html.escape(self.title)}</b>"))
        children += [self._image, *self._widgets.values()]
        self._widget = widgets.VBox(children)
        self._widget.add_class("cl-live-explorer")  # a stable selector for tests

    @property
    def controls(self) -> dict[str, Any]:
        """name -> live ipywidget; setting ``.value`` redraws the figure in place."""
        if self._widget is None:
            self._build_widget()
        return self._widgets

    @property
    def widget(self):
        """The live ipywidgets box (image above its controls)."""
        if self._widget is None:
            self._build_widget()
        return self._widget

    def update(self, **values: Any) -> bytes:
        """Show the figure at ``values`` (the callback the widgets call). Returns its PNG."""
        new = {**self.last_values, **values}
        png = self.render(**new)
        self.last_values = new
        if self._image is not None:
            self._image.value = png
        return png

    def _on_change(self, change: Mapping[str, Any]) -> None:
        name = next(n for n, w in self._widgets.items() if w is change["owner"])
        self.update(**{name: change["new"]})

    def current_png(self) -> bytes:
        """PNG bytes of the figure currently shown."""
        if self._image is not None:
            return bytes(self._image.value)
        return self.render(**self.last_values)

    # -- display -----------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        live = not _static_requested()  # a book build has no reader to talk to
        if live:
            bundle.update(_widget_bundle(self.widget, include, exclude))
        if self.static_enabled:
            bundle["text/html"] = self.static_html()
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        # the text a viewer without widgets shows: wrapped to the book's code box
        controls = ", ".join(f"{n}={self.last_values[n]!r}" for n in self.specs)
        title = f"{self.title!r}, " if self.title else ""
        return "\n".join(textwrap.wrap(f"Explorer({title}{controls})", 88, subsequent_indent="    ",
                                        break_long_words=False, break_on_hyphens=False))


def _widget_bundle(widget: Any, include: Any, exclude: Any) -> dict[str, Any]:
    """The mime bundle that shows a live widget: ipywidgets 8 provides it; ipywidgets 7
    (still found on some hosted notebooks) only has ``_ipython_display_``, so build it."""
    if hasattr(widget, "_repr_mimebundle_"):
        return dict(widget._repr_mimebundle_(include=include, exclude=exclude) or {})
    return {
        "application/vnd.jupyter.widget-view+json": {
            "version_major": 2,
            "version_minor": 0,
            "model_id": widget.model_id,
        }
    }


def _check_signature(draw: Callable[..., Any], names: list[str]) -> None:
    try:
        sig = inspect.signature(draw)
    except (TypeError, ValueError):  # builtins and the like: trust the caller
        return
    try:
        sig.bind(**{n: None for n in names})
    except TypeError as err:
        raise TypeError(
            f"draw{sig} cannot be called with the controls {names}: {err}"
        ) from None


def _json_for_script(data: Any) -> str:
    # JSON inside <script> must not contain "</" (it would end the script element).
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


_EXPLORER_JS = r"""(function(){
var root=document.getElementById("__ID__");if(!root||root.dataset.clReady)return;root.dataset.clReady="1";
var data=JSON.parse(root.querySelector("script.cl-data").textContent);
var img=root.querySelector("img.cl-explorer-image");
var inputs=Array.prototype.slice.call(root.querySelectorAll("[data-cl-control]"));
inputs.sort(function(a,b){return a.dataset.clControl-b.dataset.clControl;});
function show(){var idx=0;inputs.forEach(function(el,k){var i=parseInt(el.value,10);idx=idx*data.sizes[k]+i;
var out=root.querySelector('output[data-cl-label="'+k+'"]');
if(out){out.textContent=data.labels[k][i];el.setAttribute("aria-valuetext",data.labels[k][i]);}});
img.src=data.frames[idx];img.alt=data.alts[idx];}
inputs.forEach(function(el){el.addEventListener("input",show);el.addEventListener("change",show);});
show();
})();"""


def explorer(
    draw: Callable[..., Any],
    controls: Mapping[str, Slider | Dropdown],
    *,
    static: bool | Mapping[str, Sequence[Any]] | None = None,
    title: str | None = None,
    alt: str | Callable[..., str] | None = None,
) -> Explorer:
    """A figure the reader steers with sliders and drop-downs.

    ``draw(**values)`` returns a new matplotlib Figure for one setting of the
    controls (make it with :func:`subplots`); ``controls`` maps each argument
    name of ``draw`` to a :class:`Slider` or :class:`Dropdown`, in display order.

    ``static`` chooses the kernel-free twin: ``None`` (default) renders it only
    in a book build (``COLLECTIVES_BOOK_BUILD=1``), over every option of every
    control; ``True`` always renders it; ``False`` never; a mapping
    ``{name: [values...]}`` makes the book build pre-render only those positions
    of the named controls (others keep all their options), to keep the page light.

    ``alt`` is the alt text: a string (the settings are appended) or a function
    of the control values returning the whole text. ``title`` heads the figure.

    Display the result (make it the last expression of a cell).
    """
    return Explorer(draw, controls, static=static, title=title, alt=alt)


# --------------------------------------------------------------------------
# Player
# --------------------------------------------------------------------------


@dataclass
class Player:
    """Pre-rendered frames with play, pause and step buttons; see :func:`animation`.

    The controls carry stable classes for tests: ``button.cl-play``,
    ``button.cl-pause``, ``button.cl-step`` (forward), ``button.cl-back``,
    ``input.cl-scrub`` (a range over the frames) and ``img.cl-frame``.
    """

    frames: list[bytes]
    fps: float = 1.5
    alt: str = "Animation"
    captions: list[str] | None = None
    title: str | None = None
    loop: bool = False
    dom_id: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if not self.frames:
            raise ValueError("a player needs at least one frame")
        if not (0 < self.fps <= 30):
            raise ValueError(f"fps must be in (0, 30], got {self.fps!r}")
        if not isinstance(self.alt, str) or not self.alt.strip():
            raise ValueError("a player needs non-empty alt text")
        if self.captions is not None:
            self.captions = [str(c) for c in self.captions]
            if len(self.captions) != len(self.frames):
                raise ValueError(
                    f"{len(self.captions)} captions for {len(self.frames)} frames; give one caption per frame"
                )
        total = sum(len(f) for f in self.frames)
        if total > MAX_STATIC_BYTES:
            raise ValueError(
                f"the player's {len(self.frames)} frames weigh {total / 1e6:.2f} MB "
                f"(most {MAX_STATIC_BYTES / 1e6:.2f} MB); draw fewer or smaller frames"
            )
        if not self.dom_id:
            self.dom_id = _dom_id("cl-player", self.frames)

    def frame_alt(self, i: int) -> str:
        caption = self.captions[i] if self.captions else ""
        text = f"{self.alt}, frame {i + 1} of {len(self.frames)}"
        return f"{text}: {caption}" if caption else text

    def html(self) -> str:
        n = len(self.frames)
        data = {
            "frames": [_data_uri(f) for f in self.frames],
            "alts": [self.frame_alt(i) for i in range(n)],
            "captions": self.captions or [""] * n,
            "interval": int(1000 / self.fps),
            "loop": self.loop,
        }
        did = self.dom_id
        title = f'<div class="cl-title">{html.escape(self.title)}</div>' if self.title else ""
        caption = html.escape(data["captions"][0])
        buttons = (
            '<button type="button" class="cl-back" data-action="back" title="Step back" aria-label="Step back">&#9664;&#9646; Back</button>'
            '<button type="button" class="cl-play" data-action="play" title="Play" aria-label="Play">&#9654; Play</button>'
            '<button type="button" class="cl-pause" data-action="pause" title="Pause" aria-label="Pause">&#10074;&#10074; Pause</button>'
            '<button type="button" class="cl-step" data-action="step" title="Step forward" aria-label="Step forward">&#9646;&#9654; Step</button>'
        )
        return (
            f'{_STYLE}<div class="cl-card cl-player" id="{did}">{title}'
            f'<img class="cl-frame dark-light" src="{data["frames"][0]}" alt="{html.escape(data["alts"][0])}">'
            f'<div class="cl-caption" aria-live="polite">{caption}</div>'
            f'<div class="cl-row">{buttons}'
            f'<input type="range" class="cl-scrub" min="0" max="{n - 1}" step="1" value="0" aria-label="Frame">'
            f'<output class="cl-counter">1 / {n}</output></div>'
            f'<script type="application/json" class="cl-data">{_json_for_script(data)}</script>'
            f"<script>{_PLAYER_JS.replace('__ID__', did)}</script></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/html": self.html(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        title = f"{self.title!r}, " if self.title else ""
        return "\n".join(textwrap.wrap(f"Player({title}{len(self.frames)} frames, fps={self.fps:g})", 88,
                                        subsequent_indent="    ", break_long_words=False,
                                        break_on_hyphens=False))


_PLAYER_JS = r"""(function(){
var root=document.getElementById("__ID__");if(!root||root.dataset.clReady)return;root.dataset.clReady="1";
var d=JSON.parse(root.querySelector("script.cl-data").textContent);
var img=root.querySelector("img.cl-frame"),cap=root.querySelector(".cl-caption"),
scrub=root.querySelector("input.cl-scrub"),count=root.querySelector("output.cl-counter");
var n=d.frames.length,i=0,timer=null;
var stepB=root.querySelector("button.cl-step"),backB=root.querySelector("button.cl-back");
function show(k){i=Math.max(0,Math.min(n-1,k));img.src=d.frames[i];img.alt=d.alts[i];cap.textContent=d.captions[i];
scrub.value=i;count.textContent=(i+1)+" / "+n;root.dataset.frame=i;stepB.disabled=(i===n-1);backB.disabled=(i===0);}
function pause(){if(timer){clearInterval(timer);timer=null;}root.dataset.playing="0";}
function tick(){if(i===n-1){if(d.loop)show(0);else pause();return;}show(i+1);}
function play(){if(timer)return;if(i===n-1)show(0);timer=setInterval(tick,d.interval);root.dataset.playing="1";}
root.querySelector("button.cl-play").addEventListener("click",play);
root.querySelector("button.cl-pause").addEventListener("click",pause);
stepB.addEventListener("click",function(){pause();show(i+1);});
backB.addEventListener("click",function(){pause();show(i-1);});
scrub.addEventListener("input",function(){pause();show(parseInt(scrub.value,10));});
show(0);root.dataset.playing="0";
})();"""


def player(
    frames: Sequence[Any],
    *,
    fps: float = 1.5,
    alt: str = "Animation",
    captions: Sequence[str] | None = None,
    title: str | None = None,
    loop: bool = False,
) -> Player:
    """A player over ready frames: matplotlib Figures (rendered and closed here) or PNG bytes."""
    pngs = []
    for k, frame in enumerate(frames):
        if isinstance(frame, (bytes, bytearray)):
            if not bytes(frame[:8]) == b"\x89PNG\r\n\x1a\n":
                raise ValueError(f"frame {k} is bytes but not a PNG")
            pngs.append(bytes(frame))
        else:
            try:
                pngs.append(render_png(frame, compact=True))
            except TypeError as err:
                raise TypeError(f"frame {k}: {err}") from None
    return Player(pngs, fps=fps, alt=alt, captions=list(captions) if captions is not None else None,
                  title=title, loop=loop)


def animation(
    draw_frame: Callable[[int], Any],
    num_frames: int,
    *,
    fps: float = 1.5,
    alt: str = "Animation",
    captions: Sequence[str] | Callable[[int], str] | None = None,
    title: str | None = None,
    loop: bool = False,
) -> Player:
    """Step-by-step animation: ``draw_frame(i)`` returns a new Figure for frame ``i``.

    ``captions`` is one string per frame or a function of the frame index; each
    caption is shown under the image and appended to its alt text. The frames
    are rendered once, here, and played back by plain HTML and JavaScript.
    """
    if not isinstance(num_frames, int) or num_frames < 1:
        raise ValueError(f"num_frames must be a positive integer, got {num_frames!r}")
    if callable(captions):
        captions = [captions(i) for i in range(num_frames)]
    return player((draw_frame(i) for i in range(num_frames)), fps=fps, alt=alt,
                  captions=captions, title=title, loop=loop)
