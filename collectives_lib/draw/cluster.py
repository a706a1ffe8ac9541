"""Schedules on GPUs drawn node by node: transfers inside a node through its
NVSwitch and between nodes through the rail's leaf switch, one step with the
buffers, and a step-by-step player.

Introduced in the chapter *GPU collectives across nodes*.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..schedule import COPY, REDUCE, Schedule
from .style import (FONT, LINK_COLORS, MUTED_COLOR, NODE_EDGE_COLOR, OP_COLORS, OP_LINESTYLES, op_name,
                    rank_color, text_on, tint)
from .figure import axes_for, blank, new_figure, panel_axes
from .layout import arrow_heads, cluster_layout, rects
from .schedule import draw_buffers, replay_states, schedule_name, step_caption, step_player, step_title


def draw_cluster_transfers(schedule: Schedule, step: int | None, gpus_per_node: int, ax=None, *,
                           rails: int | None = None, title: str | None = None, legend: bool = True):
    """The transfers of one step of a schedule on GPUs drawn node by node.

    Ranks ``m * gpus_per_node + g`` are drawn as GPU ``g`` of node ``m``, the
    nodes side by side, with one leaf switch per rail above them (GPU ``g``
    is on rail ``g % rails``; ``rails`` defaults to ``gpus_per_node``). A
    transfer inside a node is an arc through the node's NVSwitch, below the
    GPUs; a transfer between nodes climbs to its rail's leaf and comes down
    to the destination (through a "spine" line above the leaves when the two
    GPUs are on different rails). Copies are blue and solid, reductions
    vermillion and dashed, as in :func:`draw_transfers`. ``step=None`` draws
    the GPUs only. The spine is drawn only when a transfer needs it: within
    one Scalable Unit a rail-aligned schedule never does.

    Introduced in the chapter *GPU collectives across nodes*.

    Returns ``{"arrows": LineCollection (one path per transfer), "heads":
    PolyCollection (one per transfer), "nodes": PolyCollection (one square
    per GPU), "leaves", "labels", "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyBboxPatch

    g = int(gpus_per_node)
    R = schedule.num_ranks
    if g < 1 or R % g:
        raise CollectivesError(f"{R} ranks do not split into nodes of {gpus_per_node} GPUs")
    if schedule.num_participants != R:
        raise CollectivesError("draw_cluster_transfers draws schedules between GPUs only (no switch agents)")
    rails = g if rails is None else int(rails)
    if rails < 1:
        raise CollectivesError(f"rails must be >= 1, got {rails}")
    M = R // g
    lay = cluster_layout(R, g, rails)
    gpu_pos, leaf_pos, pitch = lay.gpus, lay.leaves, lay.pitch
    fig, ax = axes_for(ax, 2.6 if ax is None else None)
    # node boxes with their NVSwitch
    for m in range(M):
        x0 = lay.node_x0[m]
        ax.add_patch(FancyBboxPatch((x0, -1.15), g, 1.55, boxstyle="round,pad=0.02,rounding_size=0.15",
                                    facecolor="white", edgecolor=LINK_COLORS["nvlink"], lw=1.3, zorder=0.5))
        ax.text(x0 + g / 2, -1.22, f"node {m} (NVSwitch)", ha="center", va="top", fontsize=FONT["tick"],
                color=MUTED_COLOR, zorder=1)
    # leaves and their NIC wires (faint)
    wires = []
    for r in range(R):
        wires.append([gpu_pos[r] + [0, 0.28], leaf_pos[(r % g) % rails] - [0, 0.22]])
    ax.add_collection(LineCollection(wires, colors=tint(LINK_COLORS["ib"], 0.35), linewidths=0.6, zorder=0.4),
                      autolim=False)
    leaves = PolyCollection(rects(leaf_pos[:, 0] - 0.45, leaf_pos[:, 1] - 0.22, 0.9, 0.44),
                            facecolors=tint(LINK_COLORS["ib"], 0.25), edgecolors=LINK_COLORS["ib"],
                            linewidths=1.1, zorder=3)
    ax.add_collection(leaves, autolim=False)
    for i, p in enumerate(leaf_pos):
        ax.text(*p, f"leaf {i}", ha="center", va="center", fontsize=FONT["small"], zorder=4)
    local = np.zeros(R, dtype=int)
    for grp in schedule.groups:
        local[grp] = np.arange(len(grp))
    face = [to_rgba(rank_color(i)) for i in local]
    nodes = PolyCollection(rects(gpu_pos[:, 0] - 0.3, gpu_pos[:, 1] - 0.28, 0.6, 0.56), facecolors=face,
                           edgecolors=NODE_EDGE_COLOR, linewidths=0.7, zorder=3)
    ax.add_collection(nodes, autolim=False)
    texts = [ax.text(*gpu_pos[r], str(r), ha="center", va="center",
                     fontsize=FONT["tick"] if R <= 32 else FONT["smallest"],
                     color=text_on(face[r]), zorder=4) for r in range(R)]
    spine_y = lay.spine_y
    paths, ops = [], np.zeros(0, int)
    need_spine = False
    if step is not None:
        t = schedule.steps[step].traffic
        ops = t.op.astype(int)
        for s, d in zip(t.src.astype(int).tolist(), t.dst.astype(int).tolist()):
            ps, pd = gpu_pos[s], gpu_pos[d]
            if s // g == d // g:   # NVLink: an arc below the GPUs
                span = abs(pd[0] - ps[0])
                depth = 0.2 + 0.085 * span
                off = 0.08 if pd[0] > ps[0] else -0.08
                tt = np.linspace(0, 1, 16)[:, None]
                a, b = ps + [off, -0.28], pd + [off, -0.28]
                c = (a + b) / 2 - [0, depth * 2]
                curve = (1 - tt) ** 2 * a + 2 * (1 - tt) * tt * c + tt ** 2 * b
                paths.append(curve)
            else:                 # InfiniBand: up to the rail's leaf, down to the destination
                ls, ld = leaf_pos[(s % g) % rails], leaf_pos[(d % g) % rails]
                off = 0.1 if d > s else -0.1
                pts = [ps + [off, 0.28], ls + [off, -0.22]]
                if (s % g) % rails != (d % g) % rails:
                    need_spine = True
                    pts += [ls + [off, 0.22], [ls[0] + off, spine_y - 0.1], [ld[0] + off, spine_y - 0.1],
                            ld + [off, 0.22]]
                pts += [ld + [off, -0.22], pd + [off, 0.28]]
                paths.append(np.asarray(pts, dtype=float))
    colors = [OP_COLORS[op_name(o)] for o in ops]
    styles = [OP_LINESTYLES[op_name(o)] for o in ops]
    arrows = LineCollection(paths, colors=colors, linestyles=styles, linewidths=1.4, zorder=2, capstyle="butt")
    ax.add_collection(arrows, autolim=False)
    heads = PolyCollection(arrow_heads(paths, 0.22) if paths else np.zeros((0, 3, 2)), facecolors=colors,
                           edgecolors="none", zorder=2.5)
    ax.add_collection(heads, autolim=False)
    if need_spine:
        ax.plot([leaf_pos[0, 0] - 0.5, leaf_pos[-1, 0] + 0.5], [spine_y, spine_y], color=LINK_COLORS["ib"], lw=4,
                solid_capstyle="butt", zorder=1)
        ax.text(leaf_pos[-1, 0] + 0.7, spine_y, "spine", va="center", fontsize=FONT["detail"])
    if legend and len(ops):
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=OP_COLORS[o], ls=OP_LINESTYLES[o], lw=1.6, label=o)
                   for code, o in ((COPY, "copy"), (REDUCE, "reduce")) if (ops == code).any()]
        ax.legend(handles=handles, loc="upper left", fontsize=FONT["small"], frameon=False, borderaxespad=0.0,
                  handlelength=2.0)
    xmax = max(M * pitch - 0.8, leaf_pos[-1, 0] + 1.6)
    ax.set_xlim(-0.9, xmax)
    ax.set_ylim(-1.6, spine_y + 0.4)
    ax.set_aspect("equal")
    blank(ax)
    if title is None:
        title = (f"{M} nodes x {g} GPUs, one leaf per rail" if step is None
                 else step_title(schedule, step))
    ax.set_title(title, fontsize=FONT["label"])
    n_t = 0 if step is None else len(schedule.steps[step])
    n_ib = sum(1 for p in paths if len(p) != 16)
    alt = (f"{M} nodes of {g} GPUs side by side with {rails} leaf switches above them"
           + (f"; {n_t} arrows for the transfers of step {step + 1}: {n_t - n_ib} inside nodes over NVLink "
              f"and {n_ib} between nodes through the leaves" if step is not None else "") + ".")
    return {"arrows": arrows, "heads": heads, "nodes": nodes, "leaves": leaves, "labels": texts,
            "figure": fig, "axes": ax, "alt": alt}


def draw_cluster_step(schedule: Schedule, step: int | None, gpus_per_node: int, ax=None, *, states=None,
                      rails: int | None = None):
    """One step of a schedule across GPU nodes: the transfers node by node
    (:func:`draw_cluster_transfers`, top) and every buffer after the step
    (:func:`draw_buffers`, bottom). ``ax`` may be None, a Figure or two Axes.

    Introduced in the chapter *GPU collectives across nodes*.
    """
    R = schedule.num_ranks
    fig, axes = panel_axes(ax, 2, nrows=2, height=_cluster_step_height(R), height_ratios=[1.0, 0.25 + 0.06 * R])
    states = replay_states(schedule, states)
    t = draw_cluster_transfers(schedule, step, gpus_per_node, ax=axes[0], rails=rails,
                               title="GPUs by node" if step is None else "transfers of this step")
    after = 0 if step is None else step + 1
    b = draw_buffers(schedule, after, ax=axes[1], states=states, labels=R <= 8, legend=False,
                     title="buffers before step 1" if step is None else
                     "buffers after this step (outlined: slots it wrote)")
    b["axes"].title.set_fontsize(FONT["subheading"])
    b["axes"].tick_params(labelsize=FONT["detail"])
    b["axes"].xaxis.label.set_fontsize(FONT["small"])
    g = int(gpus_per_node)
    fig.suptitle(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} over "
                 f"{R // g} nodes x {g} GPUs\n" + step_caption(schedule, step), fontsize=FONT["label"])
    alt = (f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} on {R // g} nodes of "
           f"{g} GPUs. " + step_caption(schedule, step) + " Top: " + t["alt"] + " Bottom: " + b["alt"])
    out = {k: v for k, v in b.items() if k not in ("figure", "axes", "alt", "labels")}
    out.update({k: v for k, v in t.items() if k not in ("figure", "axes", "alt", "labels")})
    out.update(labels=t["labels"] + b["labels"], figure=fig, axes=axes, alt=alt)
    return out


def _cluster_step_height(num_ranks: int) -> float:
    return min(6.4, 3.2 + 0.17 * num_ranks)


def cluster_schedule_animation(schedule: Schedule, gpus_per_node: int, *, rails: int | None = None,
                               fps: float = 1.0, title: str | None = None, max_frames: int = 40):
    """A schedule across GPU nodes as a player: frame 0 is the start, frame k
    shows step k (:func:`draw_cluster_step`), with captions and alt text.

    Introduced in the chapter *GPU collectives across nodes*.
    """
    K = schedule.num_steps
    if K + 1 > max_frames:
        raise CollectivesError(
            f"the schedule has {K} steps; an animation shows at most {max_frames - 1} (pass max_frames=)")
    states = replay_states(schedule)
    R = schedule.num_ranks

    def frame(i):
        fig, _ = new_figure(0, 0, pyplot=False, height=_cluster_step_height(R))
        draw_cluster_step(schedule, None if i == 0 else i - 1, gpus_per_node, ax=fig, states=states, rails=rails)
        return fig

    g = int(gpus_per_node)
    name = schedule_name(schedule)
    return step_player(schedule, frame, fps=fps,
                       alt=(f"Animation of the {name} on {R // g} nodes of {g} GPUs: each step's "
                             "transfers drawn node by node, inside nodes over NVLink and between nodes "
                             "through the rail's leaf switch, and every GPU's buffer"),
                       title=title or f"{name} over {R // g} nodes x {g} GPUs, step by step")
