"""Schedule drawings: every participant's buffer, the transfers of a step as
arrows, one step or all steps side by side, a step-by-step player, and an
all-to-all seen as a transpose.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..schedule import COPY, REDUCE, Schedule, expand_box
from ..topology import Switch, Topology
from .style import (EMPTY_COLOR, FAINT_COLOR, FONT, HATCH_STROKES, OP_COLORS, OP_LINESTYLES, RANK_COLORS,
                    RANK_HATCHES, SLOT_EDGE_COLOR, TEXT_COLOR, op_name, rank_color, rank_colors, text_on,
                    tint)
from .figure import (axes_for, blank, grid_ticks, hide_frame, new_figure, panel_axes,
                     player_frames)
from .layout import arrow_heads, grid_coords, rects, schedule_layout
from .slots import hatch_key, slot_digits
from .topology import draw_circles, draw_torus_links


def step_title(schedule: Schedule, step: int) -> str:
    """``step 3: 16 transfers (reduce-scatter)``: the panel title of one step."""
    st = schedule.steps[step]
    return f"step {step + 1}: {len(st)} transfers" + (f" ({st.stage})" if st.stage else "")


def _wrap_title(text: str, width: int = 92) -> str:
    """Break a long figure title over lines that fit the page column, never inside a
    share such as ``1/8 of V``."""
    import re
    import textwrap

    if len(text) <= width:
        return text
    text = re.sub(r"(\S+) of V\b", "\\1\u00a0of\u00a0V", text)   # no-break spaces
    return "\n".join(textwrap.wrap(text, width))


def _slot_owner(schedule: Schedule) -> np.ndarray:
    """Local rank that owns each slot's block (origin for all-to-all; the root for the
    collectives that have one)."""
    S = schedule.num_slots
    if not schedule.collective.rooted:
        k = len(schedule.group_shape)
        coords = np.unravel_index(np.arange(S), schedule.slot_shape)
        return np.ravel_multi_index(tuple(coords[:k]), schedule.group_shape)
    return np.full(S, int(schedule.root or 0))


def _slot_order(schedule: Schedule) -> np.ndarray:
    """Column order of the slots: all-to-all by destination, then origin; else as stored."""
    S = schedule.num_slots
    if schedule.collective.layout != "pairs":
        return np.arange(S)
    k = len(schedule.group_shape)
    coords = np.unravel_index(np.arange(S), schedule.slot_shape)
    origin = np.ravel_multi_index(tuple(coords[:k]), schedule.group_shape)
    dest = np.ravel_multi_index(tuple(coords[k:2 * k]), schedule.group_shape)
    rest = np.ravel_multi_index(tuple(coords[2 * k:]), schedule.slot_shape[2 * k:]) if len(coords) > 2 * k else 0
    return np.lexsort((rest, origin, dest))


def _lowest_bit(c: np.ndarray) -> np.ndarray:
    c = c.astype(np.uint64)
    low = c & (~c + np.uint64(1))
    out = np.full(c.shape, -1, dtype=np.int64)
    nz = low > 0
    out[nz] = np.round(np.log2(low[nz].astype(float))).astype(np.int64)
    return out


def replay_states(schedule: Schedule, states=None):
    if states is not None:
        return states
    from .. import replay

    return replay(schedule, elements=1)


def written_slots(schedule: Schedule, step: int):
    """(participant, slot, op) for every slot written in step ``step`` (0-based)."""
    st = schedule.steps[step]
    t = st.traffic
    boxes = st.boxes
    out_p, out_s, out_op = [], [], []
    for i in range(len(t)):
        slots = expand_box(boxes[i], schedule.slot_shape)
        out_p.append(np.full(len(slots), int(t.dst[i])))
        out_s.append(slots)
        out_op.append(np.full(len(slots), int(t.op[i])))
    if not out_p:
        z = np.zeros(0, np.int64)
        return z, z, z
    return np.concatenate(out_p), np.concatenate(out_s), np.concatenate(out_op)


def draw_buffers(schedule: Schedule, after: int = 0, ax=None, *, states=None, labels: bool | None = None,
                 show_written: bool = True, legend: bool = True, title: str | None = None):
    """Every participant's buffer as a row of slots, after ``after`` steps (0: before step 1).

    A slot's colour is the rank whose block it belongs to (the owner for
    all-gather, reduce-scatter and all-reduce; the origin for all-to-all,
    whose columns are grouped by destination). For reductions the slot is
    filled in proportion to the number of contributions summed into it so
    far, and (when it fits) shows that number, so partial sums grow step by
    step; for copies a filled slot shows its origin rank. Empty slots are
    white. The slots written by step ``after`` are outlined: blue solid for
    copies, vermillion dashed for reductions. ``states`` takes a precomputed
    ``cl.replay(schedule)`` (needs groups of at most 64 ranks).

    Returns ``{"slots": PolyCollection (participants x num_slots
    rectangles), "fills": PolyCollection (same count; empty ones have no
    height), "written": PolyCollection (one per written slot) or None,
    "labels": list of Text, "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba

    states = replay_states(schedule, states)
    if not 0 <= after < len(states):
        raise CollectivesError(f"after must be 0..{len(states) - 1} (steps done), got {after}")
    P, S = schedule.num_participants, schedule.num_slots
    n = schedule.group_size
    fig, ax = axes_for(ax, None if ax is not None else min(5.0, 1.2 + 0.22 * P))
    state = states[after]
    count = state.count()
    contrib = state.contrib
    order = _slot_order(schedule)
    col = np.empty(S, dtype=np.int64)
    col[order] = np.arange(S)
    owner = _slot_owner(schedule)
    reducing = schedule.collective.reduces
    color_idx = np.where(reducing, owner[None, :], _lowest_bit(contrib)) if not reducing else np.broadcast_to(owner, (P, S))
    color_idx = np.asarray(color_idx)
    colors = rank_colors(max(n, int(color_idx.max(initial=-1)) + 1))
    palette = np.array([to_rgba(c) for c in colors])
    tints = np.array([to_rgba(tint(c, 0.28)) for c in colors])
    cidx = np.where(color_idx >= 0, color_idx, 0) % len(colors)
    empty = count == 0
    if reducing:
        face = tints[cidx]
        frac = np.clip(count / n, 0, 1)
    else:
        face = np.where(empty[..., None], to_rgba(EMPTY_COLOR), palette[cidx])
        frac = np.where(empty, 0.0, 1.0)
    face = np.where(empty[..., None], to_rgba(EMPTY_COLOR), face)
    pp, ss = np.meshgrid(np.arange(P), np.arange(S), indexing="ij")
    x0 = col[ss] + 0.05
    y0 = -pp - 0.42
    cell_w, cell_h = 0.9, 0.84
    slots = PolyCollection(rects(x0, y0, cell_w, cell_h), facecolors=face.reshape(-1, 4),
                           edgecolors=SLOT_EDGE_COLOR, linewidths=0.4 if P * S > 400 else 0.6, zorder=1)
    ax.add_collection(slots, autolim=False)
    fill_face = palette[cidx].reshape(-1, 4)
    fills = PolyCollection(rects(x0, y0, cell_w, cell_h * frac), facecolors=fill_face, edgecolors="none",
                           zorder=2)
    ax.add_collection(fills, autolim=False)
    # hatching: a second cue besides colour, for ranks from 9 on
    from matplotlib.collections import LineCollection

    hatch_of = np.where(color_idx >= 0, (color_idx // len(RANK_COLORS)) % len(RANK_HATCHES), 0)
    stroke_alpha = 0.8 if P * S <= 1024 else 0.45  # dense grids: lighter strokes, less noise
    stroke_on = np.array([to_rgba("white" if text_on(c) == "white" else TEXT_COLOR, stroke_alpha)
                          for c in colors])
    segs, seg_colors = [], []
    hatched = 0
    for h in range(1, len(RANK_HATCHES)):
        sel = (hatch_of == h) & ~empty & (frac > 0)
        if not sel.any():
            continue
        hatched += int(sel.sum())
        hx, hy, hh = x0[sel], y0[sel], (cell_h * frac)[sel]
        for (ax0, ay0), (ax1, ay1) in HATCH_STROKES[RANK_HATCHES[h]]:
            seg = np.stack([np.stack([hx + ax0 * cell_w, hy + ay0 * hh], 1),
                            np.stack([hx + ax1 * cell_w, hy + ay1 * hh], 1)], 1)
            segs.append(seg)
            seg_colors.append(stroke_on[cidx[sel]])
    hatches = LineCollection(np.concatenate(segs) if segs else np.zeros((0, 2, 2)),
                             colors=np.concatenate(seg_colors) if seg_colors else "none",
                             linewidths=0.8 if P * S <= 400 else 0.5, zorder=2.5)
    ax.add_collection(hatches, autolim=False)
    written = None
    if show_written and after >= 1:
        wp, ws, wop = written_slots(schedule, after - 1)
        if len(wp):
            wx = col[ws] + 0.05
            wy = -wp - 0.42
            written = PolyCollection(rects(wx, wy, cell_w, cell_h), facecolors="none",
                                     edgecolors=[OP_COLORS[op_name(o)] for o in wop],
                                     linestyles=[OP_LINESTYLES[op_name(o)] for o in wop],
                                     linewidths=1.8 if P * S <= 400 else 1.0, zorder=3)
            ax.add_collection(written, autolim=False)
    # labels
    texts = []
    if labels is None:
        labels = P * S <= 160 and S <= 24
    if labels:
        for p in range(P):
            for s in range(S):
                c = int(count[p, s])
                if c == 0:
                    continue
                if reducing:
                    text = str(c)
                    # the number sits in the upper part of the slot: on the fill only when nearly full
                    fc = palette[cidx[p, s]] if frac[p, s] >= 0.75 else tints[cidx[p, s]]
                    y = -p + 0.1
                else:
                    text = str(int(color_idx[p, s]))
                    fc = palette[cidx[p, s]]
                    y = -p
                texts.append(ax.text(col[s] + 0.5, y, text, ha="center", va="center",
                                     fontsize=FONT["detail"], color=text_on(fc), zorder=4))
        ax.add_artist(slot_digits(ax, texts, S, P))
    ax.set_xlim(-0.1, S + 0.1)
    ax.set_ylim(-P + 0.4, 0.6)
    hide_frame(ax)
    # rows
    step_r = 1 if P <= 24 else max(1, P // 16)
    rows = list(range(0, P, step_r))
    for extra in range(schedule.num_ranks, P):
        if extra not in rows:
            rows.append(extra)
    ax.set_yticks([-p for p in rows])
    ax.set_yticklabels([schedule.participant_name(p) if P <= 24 else
                        (str(p) if p < schedule.num_ranks else schedule.participant_name(p)) for p in rows],
                       fontsize=FONT["small"] if P <= 16 else FONT["dense"])
    # columns: block boundaries and labels
    if schedule.collective.layout == "pairs":
        per = S // n
        groups = [(d * per, (d + 1) * per, f"to {d}") for d in range(n)]
        xlabel = "slots, grouped by destination rank (colour: origin rank)"
    elif not schedule.collective.rooted:
        per = S // n
        groups = [(b * per, (b + 1) * per, str(b)) for b in range(n)]
        xlabel = "block of the array (colour: owner rank)" + (
            "\nfill and number: contributions summed so far" if reducing else "")
    else:
        per = 1
        groups = [(s, s + 1, str(s)) for s in range(S)]
        xlabel = "pipeline chunks of the array"
    tick_every = 1 if len(groups) <= 16 else max(1, len(groups) // 16)
    ax.set_xticks([(a + b) / 2 for a, b, _ in groups[::tick_every]])
    ax.set_xticklabels([t for _, _, t in groups[::tick_every]],
                       fontsize=FONT["small"] if len(groups) <= 16 else FONT["dense"])
    if per > 1:
        ax.vlines([a for a, _, _ in groups[1:]], -P + 0.45, 0.55, colors=TEXT_COLOR, lw=0.8, zorder=3.5)
    ax.set_xlabel(xlabel, fontsize=FONT["annotation"])
    total = schedule.num_steps
    if title is None:
        title = ("before step 1" if after == 0 else
                 f"after step {after} of {total}" + (f" ({schedule.steps[after - 1].stage})"
                                                     if schedule.steps[after - 1].stage else ""))
    ax.set_title(title, fontsize=FONT["label"])
    hatches_key = hatch_key(np.where(count > 0, color_idx, -1))
    if legend and (written is not None or hatches_key):
        from matplotlib.lines import Line2D

        ops = sorted(set(wop.tolist())) if written is not None else []
        handles = [Line2D([], [], color=OP_COLORS[op_name(o)], ls=OP_LINESTYLES[op_name(o)], lw=1.8,
                          label=f"written this step ({op_name(o)})") for o in ops] + hatches_key
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=FONT["small"],
                  frameon=False, borderaxespad=0.2, handlelength=1.6)
    held = int((count > 0).sum())
    if reducing:
        full = int((count == n).sum())
        desc = f"{full} of {P * S} slots fully reduced"
    else:
        desc = f"{held} of {P * S} slots filled"
    alt = (f"Buffers of {P} participants, one row each with {S} slots, {title}: {desc}"
           + (f"; {len(wp)} slots written in this step are outlined" if written is not None else "") + ".")
    return {"slots": slots, "fills": fills, "hatches": hatches, "hatched": hatched, "written": written,
            "labels": texts, "color_index": np.where(count > 0, color_idx, -1), "hatch_key": hatches_key,
            "figure": fig, "axes": ax, "alt": alt}


def _arrow_paths(schedule: Schedule, step: int, topology, kind, pos, node_r):
    """One polyline per transfer (NaN breaks for wraparound hops), ending at the destination."""
    t = schedule.steps[step].traffic
    src, dst = t.src.astype(int), t.dst.astype(int)
    paths = []
    offset = 0.07 if kind == "grid" else 0.03
    if kind == "grid":
        coords = grid_coords(topology)
        dims = topology.dims
        follow = len(src) <= 2048  # beyond that, straight arrows: routing each would be slow
    for s, d in zip(src.tolist(), dst.tolist()):
        if kind == "grid":
            diff = coords[d] - coords[s]
            nz = np.nonzero(diff)[0]
            direct = len(nz) == 1 and (abs(diff[nz[0]]) == 1 or abs(diff[nz[0]]) == dims[nz[0]] - 1)
            nodes = [s, d] if direct or not follow else topology.path(s, d)
            pts = []
            for u, v in zip(nodes[:-1], nodes[1:]):
                dv = coords[v] - coords[u]
                a = int(np.nonzero(dv)[0][0])
                if np.count_nonzero(dv) > 1 or (abs(dv[a]) > 1 and abs(dv[a]) != dims[a] - 1):
                    u_vec = pos[v] - pos[u]
                    u_vec = u_vec / np.hypot(*u_vec)
                    pts += [pos[u] + u_vec * node_r, pos[v] - u_vec * node_r]  # not a link: straight
                    continue
                wrap = abs(dv[a]) > 1
                vec = np.zeros(2)
                vec[a] = -np.sign(dv[a]) if wrap else np.sign(dv[a])
                nrm = np.array([vec[1], -vec[0]]) * offset
                p, q = pos[u] + nrm, pos[v] + nrm
                if wrap:
                    pts += [p + vec * node_r, p + vec * 0.62, [np.nan, np.nan], q - vec * 0.62, q - vec * node_r]
                else:
                    pts += [p + vec * node_r, q - vec * node_r]
            paths.append(np.array(pts, dtype=float))
        elif kind == "switch":
            paths.append(_logical_arc(pos[s], pos[d], node_r))
        else:
            p, q = pos[s], pos[d]
            v = q - p
            L = np.hypot(*v)
            u = v / L if L else v
            nrm = np.array([u[1], -u[0]]) * offset
            paths.append(np.array([p + u * node_r * 1.15 + nrm, q - u * node_r * 1.15 + nrm]))
    return paths, t.op.astype(int)


#: Half the side of the NVSwitch box a ring-on-a-switch drawing puts in the middle.
SWITCH_HALF = 0.3
#: How far a logical arc bows out from the chord between its two GPUs, per unit of chord length.
ARC_BOW = 0.22


def _logical_arc(p, q, node_r, points: int = 41):
    """A send from the GPU at ``p`` to the GPU at ``q`` through a switch, drawn as who talks
    to whom: an arc bowing to the right of the chord (so ``q -> p`` bows the other way and
    the two directions of an exchange stay apart), trimmed to the two circles."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    v = q - p
    L = np.hypot(*v)
    if not L:
        return np.array([p, q])
    ctrl = (p + q) / 2 + np.array([v[1], -v[0]]) / L * ARC_BOW * L
    t = np.linspace(0.0, 1.0, points)[:, None]
    pts = (1 - t) ** 2 * p + 2 * (1 - t) * t * ctrl + t ** 2 * q
    gap = node_r * 1.15
    keep = (np.hypot(*(pts - p).T) >= gap) & (np.hypot(*(pts - q).T) >= gap)
    return pts[keep] if keep.sum() >= 2 else np.array([p, q])


def _block_label(box) -> str:
    """The slots one transfer carries, as a short label (``3``, ``0-3``), on a 1-D buffer;
    ``""`` where the slots are not one run of a 1-D buffer."""
    box = np.asarray(box)
    if box.shape != (1, 2):
        return ""
    start, count = int(box[0, 0]), int(box[0, 1])
    return str(start) if count == 1 else f"{start}-{start + count - 1}"


def _through_switch(schedule: Schedule, topology) -> bool:
    """Whether the ranks talk through a switch that takes no part itself (a ring on an
    NVSwitch node): then each arrow is drawn from the sender to its receiver, the switch
    behind them (every byte crosses it, up the sender's link and down the receiver's)."""
    return isinstance(topology, Switch) and not schedule.agents and topology.num_ranks == schedule.num_ranks


def draw_transfers(schedule: Schedule, step: int | None, topology: Topology | None = None, ax=None, *,
                   labels: bool | None = None, title: str | None = None, legend: bool = True):
    """The transfers of step ``step`` (0-based) as arrows, over the topology or a ring.

    On a 2D torus (``topology`` given, no switch agents) the ranks sit on the
    grid and each arrow follows its route hop by hop (through the wraparound
    where it goes that way); otherwise the ranks sit on a circle in rank order
    with agents (a SHARP switch) in the middle. Copies are blue solid arrows,
    reductions vermillion dashed ones. ``step=None`` draws the ranks only.

    Returns ``{"arrows": LineCollection (one path per transfer), "heads":
    PolyCollection (one per transfer), "nodes", "labels", "figure", "axes",
    "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyBboxPatch

    lay = schedule_layout(schedule, topology)
    kind, pos, node_r = lay.kind, lay.positions, lay.radius
    if kind == "ring" and _through_switch(schedule, topology):
        kind = "switch"
    R, P = schedule.num_ranks, schedule.num_participants
    fig, ax = axes_for(ax, None if ax is not None else (3.4 if kind in ("ring", "switch") else
                                                        max(3.0, min(5.4, 1.2 + 0.26 * topology.dims[1]))))
    # ranks coloured by their local index in their group
    local = np.zeros(P, dtype=int)
    for grp in schedule.groups:
        local[grp] = np.arange(len(grp))
    face = np.array([to_rgba(rank_color(i)) for i in local[:R]])
    if kind == "grid":
        X, Y = topology.dims
        vec = {0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
        draw_torus_links(ax, topology, pos[:R], vec, muted=True, lw=1.0, zorder=0.5)
        nodes = draw_circles(ax, pos[:R], node_r, face)
        ax.set_xlim(-1.0, X)
        ax.set_ylim(-1.0, Y)
        grid_ticks(ax, X, Y, fontsize=FONT["small"])
    else:
        nodes = draw_circles(ax, pos[:R], node_r, face)
        if kind == "switch":
            h = SWITCH_HALF
            ax.add_patch(FancyBboxPatch((-h, -h), 2 * h, 2 * h, boxstyle="round,pad=0.02", facecolor="none",
                                        edgecolor=TEXT_COLOR, lw=0.8, ls=":", zorder=1))
            box = "NVSwitch" if topology.link_class == "nvlink" else "switch"
            note = f"arrows: sender to receiver,\neach through the {box} (dotted)"
            ax.text(0, -1.2, note, ha="center", va="top", fontsize=FONT["detail"],
                    color=TEXT_COLOR, zorder=1)
        for a in range(R, P):
            name = schedule.participant_name(a)
            # the box fits its name: about 0.6 em a character at FONT["small"], in the
            # axes' data units (2.6 wide, the axes about 1.9 in on a book figure), 0.34 at least
            w = max(0.34, 0.06 + 0.6 * len(name) * FONT["small"] / 72 * 2.6 / 1.9)
            ax.add_patch(FancyBboxPatch(pos[a] - [w / 2, 0.1], w, 0.2, boxstyle="round,pad=0.02",
                                        facecolor="white", edgecolor=TEXT_COLOR, lw=1.2, zorder=3))
            ax.text(*pos[a], name, ha="center", va="center", fontsize=FONT["small"], zorder=4)
        ax.set_xlim(-1.3, 1.3)
        ax.set_ylim(-1.25, 1.25)
        blank(ax)
    ax.set_aspect("equal")
    texts = []
    if labels is None:
        labels = R <= 32
    if labels:
        fs = FONT["small"] if R <= 16 else FONT["dense"]      # 8 px or more on the page
        for r in range(R):
            texts.append(ax.text(*pos[r], str(r), ha="center", va="center", fontsize=fs,
                                 color=text_on(face[r]), zorder=4))
    if step is None:
        arrows = LineCollection([], zorder=2)
        heads = PolyCollection([], zorder=2)
        ax.add_collection(arrows, autolim=False)
        ax.add_collection(heads, autolim=False)
        ops = np.zeros(0, int)
    else:
        paths, ops = _arrow_paths(schedule, step, topology, kind, pos, node_r)
        colors = [OP_COLORS[op_name(o)] for o in ops]
        styles = [OP_LINESTYLES[op_name(o)] for o in ops]
        lw = 1.6 if len(paths) <= 64 else (1.0 if len(paths) <= 512 else 0.5)
        arrows = LineCollection(paths, colors=colors, linestyles=styles, linewidths=lw, zorder=2,
                                capstyle="butt")
        ax.add_collection(arrows, autolim=False)
        head = (0.22 if kind == "grid" else 0.085) * (1 if len(paths) <= 64 else 0.7)
        heads = PolyCollection(arrow_heads(paths, head), facecolors=colors, edgecolors="none", zorder=2.5)
        ax.add_collection(heads, autolim=False)
        if kind == "switch" and labels and len(paths) <= 32:    # which slots each send carries, near its sender
            boxes = schedule.steps[step].boxes
            for pth, box in zip(paths, boxes):
                text = _block_label(box)
                if text:
                    tag = dict(boxstyle="round,pad=0.12", fc="white", ec="none")
                    texts.append(ax.text(*pth[len(pth) // 4], text, ha="center", va="center",
                                         fontsize=FONT["dense"], color=TEXT_COLOR,
                                         zorder=3, bbox=tag))
    from matplotlib.lines import Line2D

    key = [Line2D([], [], color=OP_COLORS[o], ls=OP_LINESTYLES[o], lw=1.8, label=o)
           for code, o in ((COPY, "copy"), (REDUCE, "reduce")) if (ops == code).any()]
    if legend and key:
        transfer_key(ax, key)
    if title is None:
        title = (f"{schedule.algorithm} {schedule.collective}: {R} ranks" if step is None
                 else step_title(schedule, step))
    ax.set_title(title, fontsize=FONT["label"])
    n_t = 0 if step is None else len(schedule.steps[step])
    where = {"grid": "on the torus grid", "switch": "on a circle around the switch, each arrow drawn from "
             "a sender to its receiver and labelled with the blocks it carries (every byte goes up into "
             "the switch and down to the receiver)"}.get(kind, "on a circle")
    alt = (f"{R} ranks " + where
           + (f" with {n_t} arrows for the transfers of step {step + 1}" if step is not None else "") + ".")
    return {"arrows": arrows, "heads": heads, "nodes": nodes, "labels": texts, "key": key,
            "figure": fig, "axes": ax, "alt": alt}


def transfer_key(ax, handles):
    """The key beside a drawing of transfers (its operations, and what else the figure needs)."""
    return ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=FONT["small"],
                     frameon=False, borderaxespad=0.0, handlelength=2.2)


def step_caption(schedule: Schedule, step: int | None) -> str:
    if step is None:
        if schedule.collective.reduces:
            return "Before step 1: every rank holds its whole input (one contribution in every slot)."
        if schedule.collective.layout == "pairs":
            return "Before step 1: every rank holds the blocks it sends to each rank."
        return "Before step 1: every rank holds only its own block."
    st = schedule.steps[step]
    t = st.traffic
    ops = set(int(o) for o in t.op)
    what = " and ".join(("reductions" if o else "copies") for o in sorted(ops)) or "nothing"
    fr = np.unique(np.round(t.fraction, 12))
    size = ""
    if len(fr) == 1:
        size = ", all of V each" if fr[0] == 1 else f", {_fraction_text(fr[0])} of V each"
    return (f"Step {step + 1} of {schedule.num_steps}" + (f" ({st.stage})" if st.stage else "")
            + f": {len(t)} transfers, {what}{size}.")


def _fraction_text(f: float) -> str:
    from fractions import Fraction

    fr = Fraction(float(f)).limit_denominator(1 << 16)
    return str(fr)


def draw_schedule_step(schedule: Schedule, step: int | None = None, topology: Topology | None = None,
                       ax=None, *, states=None, labels: bool | None = None):
    """One step of a schedule: its transfers (left) and every buffer after it (right).

    ``step`` is 0-based (``None``: the state before step 1, no arrows).
    ``ax`` may be None, a Figure, or two Axes. Combines :func:`draw_transfers`
    and :func:`draw_buffers`; returns both dicts' artists (``"arrows"``,
    ``"heads"``, ``"slots"``, ``"fills"``, ``"written"``) with ``"figure"``,
    ``"axes"`` (two) and ``"alt"``.
    """
    P = schedule.num_participants
    height = min(5.0, max(2.9, 1.3 + 0.2 * P))
    fig, axes = panel_axes(ax, 2, height=height, width_ratios=[1, 1.45])
    states = replay_states(schedule, states)
    t = draw_transfers(schedule, step, topology, ax=axes[0], labels=labels,
                       title="ranks" if step is None else "transfers of this step")
    after = 0 if step is None else step + 1
    b = draw_buffers(schedule, after, ax=axes[1], states=states, labels=labels, legend=False,
                     title="buffers before step 1" if step is None else
                     "buffers after it (outlined: slots it wrote)")
    if b["hatch_key"]:      # what the hatched slots are, under the operations' key
        transfer_key(axes[0], t["key"] + b["hatch_key"])
    fig.suptitle(_wrap_title(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} "
                             f"over {schedule.num_ranks} ranks. " + step_caption(schedule, step)),
                 fontsize=FONT["heading"])
    alt = (f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} on "
           f"{schedule.num_ranks} ranks. " + step_caption(schedule, step) + " Left: " + t["alt"]
           + " Right: " + b["alt"])
    out = {k: v for k, v in b.items() if k not in ("figure", "axes", "alt", "labels")}
    out.update({k: v for k, v in t.items() if k not in ("figure", "axes", "alt", "labels", "nodes")})
    out.update(nodes=t["nodes"], labels=t["labels"] + b["labels"], figure=fig, axes=axes, alt=alt)
    return out


def draw_schedule_steps(schedule: Schedule, ax=None, *, states=None, max_panels: int = 16, ncols: int | None = None,
                        labels: bool | None = None):
    """Small multiples: the buffers before step 1 and after every step, side by side.

    Each panel is :func:`draw_buffers` (slots written by that step outlined
    by operation). With more than ``max_panels`` states, evenly spaced ones
    are shown (always the first and last). ``ax`` may be None, a Figure or a
    sequence of Axes.

    Returns ``{"panels": list of draw_buffers dicts, "shown": the step counts
    shown, "slots": list of PolyCollections (one per panel), "figure",
    "axes", "alt"}``.
    """
    states = replay_states(schedule, states)
    K = schedule.num_steps
    shown = list(range(K + 1))
    if len(shown) > max_panels:
        shown = sorted(set(np.round(np.linspace(0, K, max_panels)).astype(int).tolist()))
    nplots = len(shown)
    if ncols is None:
        ncols = min(nplots, 4 if schedule.num_slots <= 16 else 3)
    nrows = -(-nplots // ncols)
    P = schedule.num_participants
    if labels is None:
        labels = P * schedule.num_slots <= 64 and ncols <= 4
    # numbered slots get rows tall enough for 9 pt digits (a 15 pt pitch and more)
    row_h = max(1.2, 0.45 + 0.13 * P) if not labels else max(1.2, 0.75 + 0.22 * P)
    fig, axes = panel_axes(ax, nplots, nrows=nrows, height=min(9.0, row_h * nrows + 0.5))
    panels = []
    for a, after in zip(axes, shown):
        title = "start" if after == 0 else (f"step {after}" + (f" \u00b7 {schedule.steps[after - 1].stage}"
                                                                if schedule.steps[after - 1].stage else ""))
        art = draw_buffers(schedule, after, ax=a, states=states, labels=labels, legend=False, title=title)
        a.title.set_fontsize(FONT["annotation"])
        a.set_xlabel("")
        if P > 8 or len(panels) % ncols:
            a.set_yticks([])
        panels.append(art)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    present = set()
    for st in schedule.steps:
        present |= set(int(o) for o in np.unique(st.traffic.op))
    handles = [Line2D([], [], color=OP_COLORS[op_name(o)], ls=OP_LINESTYLES[op_name(o)], lw=1.8,
                      label=f"slot written by a {op_name(o)}") for o in sorted(present)]
    handles += hatch_key(np.concatenate([p["color_index"].ravel() for p in panels]),
                         note="\n(a second cue beside colour)")
    if schedule.collective.reduces:   # what the fill says, and why a large grid has no numbers
        handles.append(Patch(facecolor="none", edgecolor="none", label=(
            "fill height and number:\ncontributions summed so far" if labels else
            "fill height: contributions summed\nso far (too many slots to number)")))
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=FONT["annotation"],
               frameon=False, handlelength=1.8)
    fig.suptitle(_wrap_title(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} over "
                             f"{schedule.num_ranks} ranks: every buffer, step by step "
                             f"(rows: ranks; colour: {'origin' if schedule.collective.layout == 'pairs' else 'owner'} rank)"),
                 fontsize=FONT["heading"])
    alt = (f"{nplots} small panels showing the buffers of the {schedule.algorithm.replace('_', ' ')} "
           f"{schedule.collective.replace('_', '-')} on {schedule.num_ranks} ranks from the start to step {K}; "
           "the coloured slots fill up as data arrives.")
    return {"panels": panels, "shown": shown, "slots": [p["slots"] for p in panels],
            "figure": fig, "axes": axes, "alt": alt}


def schedule_animation(schedule: Schedule, topology: Topology | None = None, *, fps: float = 1.2,
                       title: str | None = None, max_frames: int = 40, labels: bool | None = None):
    """The whole schedule as a player: one frame per step, with play, pause and step buttons.

    Frame 0 is the state before step 1; frame k shows the transfers of step
    k and the buffers after it (:func:`draw_schedule_step`). Built on
    :func:`collectives_lib.book.explore.animation`, so it is plain HTML and
    JavaScript that works on the static site, in JupyterLab and in Colab;
    each frame has alt text and a caption. Display the returned
    :class:`~collectives_lib.book.explore.Player` (last expression of a cell).
    """
    K = schedule.num_steps
    if K + 1 > max_frames:
        raise CollectivesError(
            f"the schedule has {K} steps; an animation shows at most {max_frames - 1} "
            "(pass max_frames=, or use draw_schedule_steps for an overview)"
        )
    states = replay_states(schedule)

    def frame(i):
        fig, _ = new_figure(0, 0, pyplot=False, height=min(4.6, max(2.8, 1.3 + 0.2 * schedule.num_participants)))
        draw_schedule_step(schedule, None if i == 0 else i - 1, topology, ax=fig, states=states, labels=labels)
        return fig

    name = schedule_name(schedule)
    return step_player(schedule, frame, fps=fps,
                       alt=(f"Animation of the {name} on {schedule.num_ranks} ranks: the transfers "
                             "of each step as arrows and every rank's buffer filling up"),
                       title=title or f"{name} over {schedule.num_ranks} ranks, step by step")


def schedule_name(schedule: Schedule) -> str:
    return f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')}"


def step_player(schedule: Schedule, frame, *, fps: float, alt: str, title: str):
    """A player with one frame before step 1 and one after each step, captioned."""
    from ..book.explore import animation

    K = schedule.num_steps
    captions = [step_caption(schedule, None if i == 0 else i - 1) for i in range(K + 1)]
    return animation(player_frames(frame), K + 1, fps=fps, alt=alt, captions=captions,
                     title=title)


def draw_all_to_all_blocks(schedule: Schedule, after: int = 0, ax=None, *, states=None, group: int = 0,
                           ncols: int | None = None, title: str | None = None):
    """An all-to-all seen as a transpose: one small origin x destination grid per rank.

    Panel ``r`` shows what local rank ``r`` of group ``group`` holds after
    ``after`` steps (0: before step 1). Cell ``(o, d)`` is the block origin
    ``o`` sends to destination ``d``, in ``o``'s colour: pale in the rank's
    own row (its send buffer), full in its own column ``d = r`` (blocks that
    have arrived; partly filled while only some parts have), medium for
    blocks it is passing on to other ranks, white when it has never held the
    block. Cells written by step ``after`` are outlined in the copy colour.
    Row ``r`` at the start and column ``r`` at the end: the transpose.
    ``states`` takes a precomputed ``cl.replay(schedule)``; ``ax`` may be
    None, a Figure or SubFigure, or a sequence of at least ``n`` Axes.

    Returns ``{"cells": PolyCollection (n x n per panel, all panels),
    "fills": PolyCollection (same count), "written": PolyCollection or None,
    "figure", "axes", "alt"}``.

    Introduced in the chapter *All-to-all: a sharded transpose*.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    if schedule.collective.layout != "pairs":
        raise CollectivesError(f"draw_all_to_all_blocks draws all-to-all schedules, not {schedule.collective}")
    if len(schedule.group_shape) != 1:
        raise CollectivesError("draw_all_to_all_blocks draws one line of ranks (a 1D group shape)")
    if not 0 <= group < schedule.num_groups:
        raise CollectivesError(f"group must be 0..{schedule.num_groups - 1}, got {group}")
    states = replay_states(schedule, states)
    if not 0 <= after < len(states):
        raise CollectivesError(f"after must be 0..{len(states) - 1} (steps done), got {after}")
    n = schedule.group_size
    members = schedule.groups[group]
    parts = schedule.num_slots // (n * n)
    held = (states[after].contrib[members] != 0).reshape(n, n, n, parts).mean(axis=3)   # [rank, o, d]
    ncols = ncols or (n if n <= 6 else -(-n // 2))
    nrows = -(-n // ncols)
    fig, axes = panel_axes(ax, n, nrows=nrows, height=None if ax is not None else 1.0 + 1.3 * nrows)
    written = np.zeros((n, n, n), dtype=bool)
    if after >= 1:
        wp, ws, _ = written_slots(schedule, after - 1)
        local = {int(g): i for i, g in enumerate(members)}
        coords = np.unravel_index(ws, schedule.slot_shape)
        for p, o, d in zip(wp.tolist(), coords[0].tolist(), coords[1].tolist()):
            if p in local:
                written[local[p], o, d] = True
    oo, dd = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")     # cell (o, d) at x = d, y = n-1-o
    palette = np.array([to_rgba(rank_color(o)) for o in range(n)])
    cells_all, fills_all, written_all = [], [], []
    for r, a in enumerate(axes):
        h = held[r]
        face = np.tile(to_rgba(EMPTY_COLOR), (n, n, 1))
        passing = (h > 0) & (dd != r) & (oo != r)
        tints = np.array([to_rgba(tint(rank_color(o), 0.55)) for o in range(n)])
        face[passing] = tints[oo[passing]]
        face[oo == r] = to_rgba(tint(rank_color(r), 0.3))
        cells = PolyCollection(rects(dd.ravel() + 0.06, (n - 1 - oo).ravel() + 0.06, 0.88, 0.88),
                               facecolors=face.reshape(-1, 4), edgecolors=FAINT_COLOR, linewidths=0.5, zorder=1)
        a.add_collection(cells, autolim=False)
        arrived = (dd == r) & (h > 0)
        fills = PolyCollection(rects(dd[arrived] + 0.06, (n - 1 - oo[arrived]) + 0.06, 0.88, 0.88 * h[arrived]),
                               facecolors=palette[oo[arrived]], edgecolors="none", zorder=2)
        a.add_collection(fills, autolim=False)
        cells_all.append(cells)
        fills_all.append(fills)
        wo, wd = np.nonzero(written[r])
        if len(wo):
            wcol = PolyCollection(rects(wd + 0.06, (n - 1 - wo) + 0.06, 0.88, 0.88), facecolors="none",
                                  edgecolors=OP_COLORS["copy"], linewidths=1.4, zorder=3)
            a.add_collection(wcol, autolim=False)
            written_all.append(wcol)
        a.add_patch(Rectangle((r, 0), 1, n, fill=False, edgecolor=TEXT_COLOR, lw=1.0, zorder=4))
        a.set_xlim(-0.1, n + 0.1)
        a.set_ylim(-0.1, n + 0.1)
        a.set_aspect("equal")
        hide_frame(a)
        a.set_xticks(np.arange(n) + 0.5)
        a.set_xticklabels([str(d) for d in range(n)], fontsize=FONT["dense"])
        a.set_yticks(np.arange(n) + 0.5)
        a.set_yticklabels([str(o) for o in range(n)][::-1], fontsize=FONT["dense"])
        a.set_title(f"rank {int(members[r])}", fontsize=FONT["annotation"], pad=3)
        if r % ncols:
            a.set_yticklabels([])
        else:
            a.set_ylabel("from", fontsize=FONT["small"], labelpad=1)
        if r >= n - ncols:
            a.set_xlabel("to", fontsize=FONT["small"], labelpad=1)
    if title is not None:
        fig.suptitle(title, fontsize=FONT["label"])
    arrived_total = int(sum((held[r][:, r] >= 1).sum() for r in range(n)))
    alt = (f"{n} small grids, one per rank, of the blocks of an all-to-all by origin (rows) and destination "
           f"(columns) after {after} of {schedule.num_steps} steps: {arrived_total} of {n * n} blocks have "
           "reached their destination column.")
    return {"cells": cells_all, "fills": fills_all, "written": written_all or None,
            "figure": fig, "axes": axes, "alt": alt}
