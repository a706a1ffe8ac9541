"""Unit tests for collectives_lib.book.explore: drive the widgets by setting .value and
read what they show; check the kernel-free twins; check the errors."""

from __future__ import annotations

import gc
import json
import re
import subprocess
import sys

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pytest.importorskip("ipywidgets")

from matplotlib.figure import Figure  # noqa: E402
from traitlets import TraitError  # noqa: E402

from collectives_lib import explore  # noqa: E402
from collectives_lib.book.explore import Dropdown, Slider, animation, explorer, player, subplots  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(autouse=True)
def no_build_env(monkeypatch):
    monkeypatch.delenv(explore.BUILD_ENV, raising=False)


class Recorder:
    """A drawing function that records its calls and draws its arguments as text,
    so different values give different PNGs."""

    def __init__(self):
        self.calls = []

    def __call__(self, n, size="small"):
        self.calls.append({"n": n, "size": size})
        fig, ax = subplots(height=1.5)
        ax.plot(range(n + 1), [i * (2 if size == "big" else 1) for i in range(n + 1)])
        ax.set_title(f"n={n} size={size}")
        return fig


def make(static=None, **kw):
    draw = Recorder()
    exp = explorer(
        draw,
        {
            "n": Slider("ranks N", [2, 4, 8], value=4, format=lambda n: f"N={n}"),
            "size": Dropdown("size", ["small", "big"]),
        },
        static=static,
        title="Test figure",
        **kw,
    )
    return exp, draw


def frames_in(html: str) -> list[str]:
    data = json.loads(re.search(r'<script type="application/json" class="cl-data">(.*?)</script>', html, re.S).group(1))
    return data


# -- controls ---------------------------------------------------------------


def test_slider_defaults_to_first_option():
    assert Slider("N", [2, 4]).value == 2


def test_slider_rejects_default_outside_options():
    with pytest.raises(ValueError, match=r"slider 'N': default 3 is not one of the options \[2, 4\]"):
        Slider("N", [2, 4], value=3)


def test_control_rejects_empty_options():
    with pytest.raises(ValueError, match="dropdown 'link' has no options"):
        Dropdown("link", [])


def test_control_rejects_repeated_options():
    with pytest.raises(ValueError, match="lists the option 4 twice"):
        Slider("N", [2, 4, 4])


def test_control_rejects_empty_label():
    with pytest.raises(ValueError, match="non-empty label"):
        Slider("", [1])


def test_format_labels_values():
    assert Slider("V", [2**20], format=lambda b: f"{b / 2**20:g} MiB").text(2**20) == "1 MiB"


# -- explorer construction errors --------------------------------------------


def test_explorer_needs_a_callable():
    with pytest.raises(TypeError, match="draw must be a function"):
        explorer(None, {"n": Slider("N", [1])})


def test_explorer_needs_controls():
    with pytest.raises(ValueError, match="at least one control"):
        explorer(lambda: None, {})


def test_explorer_rejects_non_controls():
    with pytest.raises(TypeError, match="control 'n' must be a Slider or a Dropdown"):
        explorer(lambda n: None, {"n": [1, 2]})


def test_explorer_checks_draw_signature():
    with pytest.raises(TypeError, match=r"cannot be called with the controls \['m'\]"):
        explorer(lambda n: None, {"m": Slider("M", [1])})


def test_explorer_rejects_unknown_static_name():
    with pytest.raises(ValueError, match=r"static names unknown control\(s\) \['x'\]"):
        make(static={"x": [1]})


def test_explorer_rejects_static_value_outside_options():
    with pytest.raises(ValueError, match=r"3 is not one of the options of slider 'ranks N': \[2, 4, 8\]"):
        make(static={"n": [2, 3]})


def test_explorer_rejects_empty_alt():
    with pytest.raises(ValueError, match="alt text must not be empty"):
        make(alt="  ")


# -- rendering and the live widget ------------------------------------------------


def test_render_returns_png_and_caches():
    exp, draw = make()
    png = exp.render(n=2, size="small")
    assert png.startswith(PNG_MAGIC)
    assert exp.render(n=2, size="small") == png
    assert len(draw.calls) == 1


def test_render_rejects_bad_values():
    exp, _ = make()
    with pytest.raises(ValueError, match=r"3 is not one of the options of slider 'ranks N'"):
        exp.render(n=3, size="small")
    with pytest.raises(ValueError, match=r"unknown control\(s\) \['m'\]"):
        exp.render(n=2, size="small", m=1)
    with pytest.raises(ValueError, match=r"missing value\(s\) for control\(s\) \['size'\]"):
        exp.render(n=2)


def test_draw_must_return_a_figure():
    exp = explorer(lambda n: None, {"n": Slider("N", [1])})
    with pytest.raises(TypeError, match="must return a matplotlib Figure .* got NoneType"):
        exp.render(n=1)


def test_widgets_start_at_defaults_and_show_their_figure():
    exp, draw = make()
    controls = exp.controls
    assert list(controls) == ["n", "size"]
    assert controls["n"].value == 4 and controls["size"].value == "small"
    assert exp.last_values == {"n": 4, "size": "small"}
    assert exp.current_png() == exp.render(n=4, size="small")
    assert draw.calls == [{"n": 4, "size": "small"}]


def test_setting_a_slider_redraws_in_place():
    exp, draw = make()
    before = exp.current_png()
    exp.controls["n"].value = 8
    assert exp.last_values == {"n": 8, "size": "small"}
    assert draw.calls[-1] == {"n": 8, "size": "small"}
    assert exp.current_png() != before
    assert exp.current_png() == exp.render(n=8, size="small")
    # one image widget, updated in place: the box still holds exactly one image
    images = [w for w in exp.widget.children if type(w).__name__ == "Image"]
    assert len(images) == 1 and bytes(images[0].value) == exp.current_png()


def test_setting_a_dropdown_redraws():
    exp, draw = make()
    exp.controls["size"].value = "big"
    assert draw.calls[-1] == {"n": 4, "size": "big"}
    assert exp.current_png() == exp.render(n=4, size="big")


def test_slider_labels_use_format():
    exp, _ = make()
    assert exp.controls["n"].options == (("N=2", 2), ("N=4", 4), ("N=8", 8))
    assert exp.controls["n"].label == "N=4"


def test_widget_rejects_values_outside_options():
    exp, _ = make()
    with pytest.raises(TraitError):
        exp.controls["n"].value = 3
    with pytest.raises(ValueError, match="3 is not one of the options"):
        exp.update(n=3)
    assert exp.last_values == {"n": 4, "size": "small"}


def test_redraws_do_not_leak_figures():
    gc.collect()
    before = {id(o) for o in gc.get_objects() if isinstance(o, Figure)}   # other tests' figures
    exp, _ = make()
    for value in [2, 4, 8, 2, 8]:
        exp.controls["n"].value = value
        exp.controls["size"].value = "big" if value == 8 else "small"
    gc.collect()
    alive = [o for o in gc.get_objects() if isinstance(o, Figure) and id(o) not in before]
    assert len(alive) == 0


def test_pyplot_figures_are_closed_too():
    import matplotlib.pyplot as plt

    def draw(n):
        fig = plt.figure()
        fig.gca().plot([0, n])
        return fig

    before = set(plt.get_fignums())             # figures other tests left open are not ours
    exp = explorer(draw, {"n": Slider("N", [1, 2, 3])})
    for n in (1, 2, 3):
        exp.update(n=n)
    assert set(plt.get_fignums()) == before


# -- mime bundle and the static twin -------------------------------------------------


def test_live_bundle_has_widget_and_no_twin_by_default():
    exp, _ = make()
    bundle = exp._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and "text/html" not in bundle
    assert bundle["text/plain"] == "Explorer('Test figure', n=4, size='small')"


def test_live_bundle_without_repr_mimebundle_uses_the_model_id():
    """ipywidgets 7 widgets have no _repr_mimebundle_; the explorer builds the view itself."""

    class OldWidget:
        model_id = "abc123"

    exp, _ = make()
    exp._widget = OldWidget()
    view = exp._repr_mimebundle_()[WIDGET_VIEW]
    assert view == {"version_major": 2, "version_minor": 0, "model_id": "abc123"}


def test_build_bundle_has_twin_and_no_widget(monkeypatch):
    monkeypatch.setenv(explore.BUILD_ENV, "1")
    exp, _ = make()
    bundle = exp._repr_mimebundle_()
    assert "text/html" in bundle and WIDGET_VIEW not in bundle


def test_static_true_gives_both():
    exp, _ = make(static=True)
    bundle = exp._repr_mimebundle_()
    assert "text/html" in bundle and WIDGET_VIEW in bundle


def test_static_false_never_renders_twin(monkeypatch):
    monkeypatch.setenv(explore.BUILD_ENV, "1")
    exp, _ = make(static=False)
    assert "text/html" not in exp._repr_mimebundle_()


def test_twin_has_one_image_per_grid_position():
    exp, _ = make(static=True)
    html = exp.static_html()
    data = frames_in(html)
    assert data["sizes"] == [3, 2]
    assert len(data["frames"]) == 6
    assert all(f.startswith("data:image/png;base64,") for f in data["frames"])
    assert len(set(data["frames"])) == 6, "every position must show a different picture"
    assert data["labels"] == [["N=2", "N=4", "N=8"], ["small", "big"]]
    # frames are in row-major order of the controls: the frame for (n=8, big) is the last
    assert "ranks N = N=8, size = big" in data["alts"][-1]


def test_twin_starts_at_the_defaults():
    exp, _ = make(static=True)
    html = exp.static_html()
    data = frames_in(html)
    start = data["frames"].index(re.search(r'<img class="cl-explorer-image[^"]*" src="([^"]+)"', html).group(1))
    assert start == 1 * 2 + 0  # n=4 is position 1 of 3, size=small position 0 of 2
    assert 'type="range"' in html and 'value="1"' in html
    assert html.count("<select") == 1 and html.count('type="range"') == 1


def test_twin_images_carry_alt_text():
    exp, _ = make(static=True, alt="Line that gets steeper")
    html = exp.static_html()
    tags = re.findall(r"<img\b[^>]*>", html)
    assert len(tags) == 1
    assert 'alt="Line that gets steeper (ranks N = N=4, size = small)"' in tags[0]
    assert all(a.startswith("Line that gets steeper (") for a in frames_in(html)["alts"])


def test_alt_can_be_a_function():
    exp, _ = make(static=True, alt=lambda n, size: f"{n} ranks, {size}")
    assert frames_in(exp.static_html())["alts"][0] == "2 ranks, small"


def test_static_subset_limits_the_grid():
    exp, draw = make(static={"n": [8, 2]})
    data = frames_in(exp.static_html())
    assert data["sizes"] == [2, 2] and len(data["frames"]) == 4
    assert data["labels"][0] == ["N=2", "N=8"]  # kept in the slider's order
    assert {c["n"] for c in draw.calls} == {2, 8}
    assert "Pre-rendered at a few positions" in exp.static_html()


def test_static_subset_alone_does_not_force_the_twin(monkeypatch):
    exp, _ = make(static={"n": [2, 8]})
    assert "text/html" not in exp._repr_mimebundle_()
    monkeypatch.setenv(explore.BUILD_ENV, "1")
    assert len(frames_in(exp._repr_mimebundle_()["text/html"])["frames"]) == 4


def test_twin_refuses_too_many_positions():
    exp = explorer(lambda n: None, {"n": Slider("N", list(range(100)))}, static=True)
    with pytest.raises(ValueError, match=r"would pre-render 100 = 100 figures \(most 64\); pass static="):
        exp.static_html()


def test_twin_html_cannot_break_out_of_its_script():
    exp = explorer(Recorder(), {"n": Slider("N", [1, 2], format=lambda n: f"</script>{n}")}, static=True)
    html = exp.static_html()
    json_part = re.search(r'class="cl-data">(.*?)</script>', html, re.S).group(1)
    assert "</script>" not in json_part and json.loads(json_part)["labels"] == [["</script>1", "</script>2"]]


# -- player ----------------------------------------------------------------------------


def draw_frame(i):
    fig, ax = subplots(height=1.2)
    ax.bar(range(4), [1 if k <= i else 0 for k in range(4)])
    return fig


def test_animation_renders_every_frame_with_controls():
    anim = animation(draw_frame, 4, captions=lambda i: f"step {i}", alt="Bars filling in")
    assert len(anim.frames) == 4 and all(f.startswith(PNG_MAGIC) for f in anim.frames)
    html = anim._repr_mimebundle_()["text/html"]
    for selector in ('class="cl-play"', 'class="cl-pause"', 'class="cl-step"', 'class="cl-back"', 'class="cl-scrub"', 'class="cl-frame'):
        assert selector in html
    data = frames_in(html)
    assert len(data["frames"]) == 4 and data["captions"] == ["step 0", "step 1", "step 2", "step 3"]
    assert data["alts"][2] == "Bars filling in, frame 3 of 4: step 2"
    assert repr(anim) == "Player(4 frames, fps=1.5)"


def test_player_accepts_png_bytes():
    pngs = [explore.render_png(draw_frame(i)) for i in range(2)]
    assert player(pngs, alt="two frames").frames == pngs


def test_player_rejects_bad_input():
    with pytest.raises(ValueError, match="frame 0 is bytes but not a PNG"):
        player([b"GIF89a"], alt="x")
    with pytest.raises(ValueError, match="2 captions for 1 frames"):
        player([draw_frame(0)], captions=["a", "b"], alt="x")
    with pytest.raises(ValueError, match="at least one frame"):
        player([], alt="x")
    with pytest.raises(ValueError, match=r"fps must be in \(0, 30\]"):
        player([draw_frame(0)], fps=0, alt="x")
    with pytest.raises(ValueError, match="non-empty alt text"):
        player([draw_frame(0)], alt="")
    with pytest.raises(TypeError, match="frame 0: the drawing function must return a matplotlib Figure"):
        player(["not a figure"], alt="x")
    with pytest.raises(ValueError, match="num_frames must be a positive integer"):
        animation(draw_frame, 0)


# -- import cost -------------------------------------------------------------------------


def test_importing_explore_imports_no_gui_library():
    code = (
        "import sys, collectives_lib, collectives_lib.book.explore\n"
        "heavy = [m for m in ('matplotlib', 'ipywidgets', 'IPython') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_text_a_viewer_without_widgets_shows_fits_the_code_box():
    exp = explorer(Recorder(), {"n": Slider("ranks N", [2, 4, 8, 16, 32, 64], value=8),
                                "size": Slider("size", [2**k for k in range(10, 31)], value=2**20)},
                   static=False,
                   title="all-reduce time on a ring of N chips against the size of each chip's array")
    text = repr(exp)
    assert max(map(len, text.splitlines())) <= 88 and "n=8" in text and "size=1048576" in text
