"""Drawings for the book: topologies, schedules and costs, in one visual language.

Every function here follows the networkx convention: it takes ``ax=None``
(and makes a figure of the book's width when none is given), imports
matplotlib only when called, never calls ``plt.show()``, and returns its
artists in a dict. Every dict also carries ``"figure"``, ``"axes"`` and
``"alt"``, a one-sentence description of the picture for screen readers;
:func:`show` turns a figure (or such a dict) into an ``<img>`` with that alt
text, which is how the chapters display figures::

    import collectives_lib as cl
    art = cl.draw.draw_torus(cl.tpu_pod("v5e"))
    cl.draw.show(art)                      # PNG card with alt text

One palette for the whole book (constants of :mod:`~collectives_lib.draw.style`,
never re-chosen per figure):

* :data:`RANK_COLORS` -- one colour per rank or chunk origin (Paul Tol's
  colour-blind-safe *muted* scheme) for ranks 0..8; :func:`rank_color` gives
  every further rank its own colour, chosen to stay far from all before it
  (neighbours differ by a CIE76 delta-E above 25), and a hatching from
  :data:`RANK_HATCHES` as a second cue; small drawings also print the rank
  number, so colour never carries meaning alone.
* :data:`OP_COLORS` and :data:`OP_LINESTYLES` -- copy (blue, solid) versus
  reduce (vermillion, dashed).
* :data:`LINK_COLORS` and :data:`LINK_LINESTYLES` -- ICI, NVLink,
  InfiniBand, PCIe, DCN (Okabe-Ito hues where it has them; PCIe dotted, DCN
  dash-dotted, so print and colour-blind readers can tell them apart).
* :data:`STAGE_COLORS` -- stages of a schedule (Tol's *bright* scheme, with
  :data:`STAGE_HATCHES`).
* :data:`LOAD_CMAP` -- link loads, light (idle) to dark (busiest).
* the rest of a figure by role: :data:`TEXT_COLOR`, :data:`MUTED_COLOR`,
  :data:`FAINT_COLOR`, :data:`GRID_COLOR`, :data:`NODE_COLOR` and its edge,
  :data:`IDLE_COLOR`, :data:`REGIME_COLORS`...; :func:`color_for` names any of
  them (``color_for(3)``, ``color_for("reduce")``, ``color_for("grid")``).

One size rule: :data:`FIGURE_WIDTH` inches at :data:`DPI` (700 px, the
width of the sphinx-book-theme page column), ``layout="constrained"`` and a
white background, so the PNG reads as a card in the site's dark mode too;
font sizes by role from :data:`FONT` (``FONT["title"]``, ``FONT["label"]``,
``FONT["annotation"]``...), never written as numbers.
A chapter's own plot takes the same sizes with :func:`label_axes` (title
and axis labels), :func:`legend` (frameless) and :func:`grid`.

Counting artists (what the tests check): schedule drawings return
``"arrows"``, a LineCollection with one path per transfer of the step
(``len(art["arrows"].get_paths())``), and ``"slots"``, a PolyCollection with
one rectangle per participant and slot (``participants x num_slots``).
Topology drawings return ``"nodes"`` (one square per endpoint) and
``"links"`` (one path per drawn link; see each function for what a link is).

The package, by concern (every name above is also ``cl.draw.<name>``):

* :mod:`~collectives_lib.draw.style` -- the palette and the size rule;
* :mod:`~collectives_lib.draw.layout` -- positions as data (numpy only, no matplotlib);
* :mod:`~collectives_lib.draw.figure` -- figures, axes, legends, colour bars, :func:`show`;
* :mod:`~collectives_lib.draw.topology` and :mod:`~collectives_lib.draw.routes` -- topologies,
  cuts and routes;
* :mod:`~collectives_lib.draw.schedule` and :mod:`~collectives_lib.draw.cluster` -- schedules
  (on any topology, and on GPUs node by node);
* :mod:`~collectives_lib.draw.cost` -- times, bandwidths and link loads;
* :mod:`~collectives_lib.draw.pipeline` -- packets crossing links and workload pipelines;
* :mod:`~collectives_lib.draw.alpha_beta` -- one message's two terms, a ring's time across sizes,
  a ring all-reduce's bytes per GPU;
* :mod:`~collectives_lib.draw.schemes` -- tree, hierarchical and in-network all-reduce schematics;
* :mod:`~collectives_lib.draw.server` -- a server's PCIe tree with the GPUDirect RDMA path, and a
  full mesh against a switch.
* :mod:`~collectives_lib.draw.cuts` -- the bandwidth across every split of a cluster;
* :mod:`~collectives_lib.draw.compare` -- two systems' times side by side;
* :mod:`~collectives_lib.draw.nvswitch` -- what an NVSwitch holds while SHARP streams through it.
* :mod:`~collectives_lib.draw.crossover` -- algorithms against message size, the fastest per size;
* :mod:`~collectives_lib.draw.training` -- a training step in time (DDP's bucketed backward pass);
* :mod:`~collectives_lib.draw.scaling` -- Amdahl's law, the slowest of n chips, GPipe, a straggler;
* :mod:`~collectives_lib.draw.validation` -- published nccl-tests runs against the two models, and
  the busbw NCCL's model predicts beside its lower bound.
* :mod:`~collectives_lib.draw.latency` -- a transfer's front hop by hop, and the latency share;
* :mod:`~collectives_lib.draw.all_gather` -- the all-gather explorer;
* :mod:`~collectives_lib.draw.reduce_scatter` -- the one-axis reduce-scatter explorer and step-time bars;
* :mod:`~collectives_lib.draw.all_to_all` -- the all-to-all player, skew explorer and summary table.

Introduced in the chapter *A first look*; the gallery appendix shows every
drawing.
"""

from __future__ import annotations

from importlib.util import find_spec as _find_spec

if _find_spec("matplotlib") is None:   # looks for matplotlib without importing it
    raise ModuleNotFoundError(
        'collectives_lib.draw needs matplotlib, which is not installed: pip install "collectives_lib[plot]"',
        name="matplotlib")

from .alpha_beta import draw_message_time, draw_ring_bytes, draw_ring_time
from ..analysis import ALL_GATHER_KINDS, AXIS_KINDS  # the explorers' choices, for their dropdowns
from .all_gather import draw_all_gather_explorer
from .all_to_all import (all_to_all_animation, all_to_all_frame, draw_all_to_all_explorer, draw_collective_summary,
                         draw_moe_skew,
                         summary_markdown)
from .cluster import cluster_schedule_animation, draw_cluster_step, draw_cluster_transfers
from .compare import draw_paired_times
from .cuts import draw_cut_sweep
from .cost import (draw_bandwidth_curves, draw_bandwidth_ladder, draw_cost_curves, draw_link_loads,
                   draw_step_times)
from .crossover import draw_size_crossover
from .figure import FigureImage, grid, label_axes, legend, new_figure, show
from .nvswitch import draw_algorithm_sweep, in_flight_states, sharp_stream_animation
from .latency import draw_latency_share, route_front_animation
from .pipeline import draw_packet_pipeline, draw_pipeline, packet_pipeline_animation
from .reduce_scatter import draw_reduce_scatter_explorer, draw_stage_step_times
from .routes import draw_bisection, draw_fat_tree_route, draw_route
from .schedule import (draw_all_to_all_blocks, draw_buffers, draw_schedule_step, draw_schedule_steps,
                       draw_transfers, schedule_animation)
from .schemes import draw_hierarchical_all_reduce, draw_in_network_all_reduce, draw_tree_all_reduce
from .server import draw_mesh_and_switch, draw_pcie_tree
from .style import (ALGORITHM_STYLES, DPI, EMPTY_COLOR, FAINT_COLOR, FIGURE_HEIGHT, FIGURE_WIDTH, FONT,
                    GRID_COLOR, IDLE_COLOR, IDLE_LINK_COLOR, LINK_COLORS, LINK_LABELS, LINK_LINESTYLES,
                    LOAD_CMAP, MUTED_COLOR, NODE_COLOR, NODE_EDGE_COLOR, OP_COLORS, OP_LINESTYLES,
                    PANEL_COLOR, PANEL_EDGE_COLOR, PATH_STYLES, RANK_COLORS, RANK_HATCHES, REGIME_COLORS,
                    ROUTE_COLOR, SLOT_EDGE_COLOR, STAGE_COLORS, STAGE_HATCHES, TEXT_COLOR, WRAP_LINESTYLE,
                    color_for, rank_color, rank_colors, rank_hatch)
from .scaling import draw_amdahl, draw_gpipe, draw_slowest_tail, draw_straggler_step
from .training import draw_ddp_timeline
from .validation import draw_busbw_prediction, draw_measured_vs_models
from .networks import draw_fat_tree, draw_switch, draw_topology
from .topology import (draw_torus, draw_torus_summary,
                       draw_slice_in_pod, draw_tpu_system)

__all__ = [
    "FIGURE_WIDTH", "FIGURE_HEIGHT", "DPI", "RANK_COLORS", "RANK_HATCHES", "EMPTY_COLOR",
    "OP_COLORS", "OP_LINESTYLES", "LINK_COLORS", "LINK_LINESTYLES", "LINK_LABELS",
    "STAGE_COLORS", "STAGE_HATCHES", "ALGORITHM_STYLES", "LOAD_CMAP", "TEXT_COLOR",
    "new_figure", "show", "FigureImage", "rank_color", "rank_hatch",
    "draw_topology", "draw_torus", "draw_torus_summary", "draw_slice_in_pod",
    "draw_tpu_system", "draw_switch", "draw_fat_tree", "draw_bisection", "draw_route",
    "draw_buffers", "draw_transfers", "draw_schedule_step", "draw_schedule_steps",
    "schedule_animation", "draw_cost_curves", "draw_bandwidth_curves", "draw_step_times",
    "draw_link_loads", "draw_bandwidth_ladder", "draw_all_to_all_blocks", "draw_pipeline", "draw_packet_pipeline", "packet_pipeline_animation",
    "draw_message_time", "draw_ring_time", "draw_ring_bytes", "draw_tree_all_reduce",
    "draw_hierarchical_all_reduce", "draw_in_network_all_reduce", "draw_pcie_tree", "draw_mesh_and_switch",
    "sharp_stream_animation", "in_flight_states", "draw_algorithm_sweep", "draw_paired_times", "draw_cut_sweep",
    "draw_size_crossover", "draw_ddp_timeline", "draw_measured_vs_models", "draw_busbw_prediction",
    "draw_amdahl", "draw_slowest_tail", "draw_gpipe", "draw_straggler_step",
    "ALL_GATHER_KINDS",
    "draw_all_gather_explorer", "AXIS_KINDS", "draw_reduce_scatter_explorer", "draw_stage_step_times",
    "draw_latency_share", "route_front_animation", "all_to_all_animation", "all_to_all_frame", "draw_all_to_all_explorer", "draw_collective_summary", "draw_moe_skew", "summary_markdown",
]
