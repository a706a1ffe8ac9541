"""draw_bisection and draw_fat_tree_route: no route or cut line over the labels it passes."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import draw


def _close(art):
    import matplotlib.pyplot as plt

    plt.close(art["figure"])


def _line_hits(line, bbox, renderer) -> bool:
    """Whether a Line2D's drawn path, in pixels, enters ``bbox``."""
    xy = line.get_transform().transform(np.column_stack(line.get_data()))
    for a, b in zip(xy[:-1], xy[1:]):
        for t in np.linspace(0, 1, 200):
            x, y = a + t * (b - a)
            if bbox.x0 <= x <= bbox.x1 and bbox.y0 <= y <= bbox.y1:
                return True
    return False


def test_superpod_bisection_keeps_the_spine_label_over_the_cut_and_the_footer_clear():
    art = draw.draw_bisection(cl.superpod())
    fig = art["figure"]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    cut, label, footer = art["cut"], art["spine_label"], art["footer"]
    assert not _line_hits(cut, footer.get_window_extent(renderer), renderer)
    # the cut crosses the spine where its label is: the label is drawn over it on white
    assert label.get_zorder() > cut.get_zorder()
    patch = label.get_bbox_patch()
    assert patch is not None and patch.get_facecolor()[:3] == (1.0, 1.0, 1.0)
    assert patch.get_window_extent(renderer).contains(*label.get_window_extent(renderer).get_points().mean(0))
    _close(art)


@pytest.mark.parametrize("src, dst, hops", [(0, 5, 1), (0, 5, 2), (3, 12, 1)])
def test_fat_tree_route_leaves_the_nvswitch_labels_readable(src, dst, hops):
    toy = cl.GpuCluster("dgx-h100", 4, nodes_per_su=2)
    fig, ax = draw.new_figure(pyplot=False, height=3.6)
    art = draw.draw_fat_tree_route(toy, src, dst, ax=ax, hops=hops)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    packet = art["packet"].get_window_extent(renderer)
    route = art["route"]
    for text in art["nvswitch_labels"]:
        box = text.get_window_extent(renderer)
        assert not packet.overlaps(box), text.get_text()
        for path in route.get_paths():
            xy = ax.transData.transform(path.vertices)
            for a, b in zip(xy[:-1], xy[1:]):
                pts = a + np.linspace(0, 1, 100)[:, None] * (b - a)
                inside = ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                          & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
                assert not inside.any(), text.get_text()
