"""Network drawings: an NVSwitch node, an InfiniBand fat tree of GPU nodes, and
:func:`draw_topology`, which draws any topology with the drawing that suits it.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..topology import GpuCluster, Switch, Topology, Torus, TpuSystem
from ..units import format_rate
from .style import (FONT, IDLE_LINK_COLOR, LINK_COLORS, LINK_LABELS, NODE_COLOR, NODE_EDGE_COLOR, RANK_COLORS, TEXT_COLOR, tint)
from .figure import (axes_for, blank, class_legend, topology_name, value_colorbar,
                     value_norm)
from .layout import (fat_tree_layout, rects,
                     star_layout)
from .topology import linewidth_for, draw_circles, draw_torus, draw_torus_summary, draw_tpu_system


def draw_topology(topology: Topology, ax=None, **kwargs):
    """Draw any topology with the drawing that suits it.

    Tori and TPU slices: :func:`draw_torus` (large 3D ones:
    :func:`draw_torus_summary`); TPU systems: :func:`draw_tpu_system`; a
    switch: :func:`draw_switch`; a GPU cluster: :func:`draw_fat_tree`.
    """
    if isinstance(topology, TpuSystem):
        return draw_tpu_system(topology, ax=ax, **kwargs)
    if isinstance(topology, GpuCluster):
        return draw_fat_tree(topology, ax=ax, **kwargs)
    if isinstance(topology, Switch):
        return draw_switch(topology, ax=ax, **kwargs)
    if isinstance(topology, Torus):
        if len(topology.dims) == 3 and topology.dims[2] > 8:
            return draw_torus_summary(topology, ax=ax, **kwargs)
        return draw_torus(topology, ax=ax, **kwargs)
    raise CollectivesError(f"no drawing for {topology!r}")


def draw_switch(topology: Switch, ax=None, *, link_values=None, value_label: str = "link busy time",
                labels: bool | None = None, sides=None):
    """Endpoints on one switch (an NVSwitch node: 8 GPUs, or 72 for GB200 NVL72).

    GPUs sit on a circle around the switch, each with its link into the
    switch. ``link_values`` (one number per directed link) draws the up- and
    down-links side by side, coloured by load. ``sides`` (two lists of
    ranks) colours the two halves of a cut.

    Returns ``{"nodes": PolyCollection (one per GPU), "links": LineCollection
    (one spoke per GPU, or one per directed link with link_values), "switch",
    "labels", "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyBboxPatch

    if not isinstance(topology, Switch):
        raise CollectivesError(f"draw_switch draws a Switch, not {topology!r}")
    n = topology.num_ranks
    fig, ax = axes_for(ax, (3.4 if n <= 16 else 4.4) if ax is None else None)
    star = star_layout(n)
    pos, node_r, sw_half = star.nodes, star.node_radius, star.hub_half
    links = topology.links
    klass = topology.link_class
    cmap = norm = None
    if link_values is None:
        paths = list(star.spokes)
        coll = LineCollection(paths, colors=LINK_COLORS[klass], linewidths=4.0 if n <= 16 else 1.2, zorder=1)
    else:
        cmap, norm = value_norm(link_values)
        paths = []
        for lid in range(len(links)):
            s, d = int(links.src[lid]), int(links.dst[lid])
            g = s if s < n else d
            p, q = star.spokes[g]
            u = (q - p) / np.hypot(*(q - p))
            off = np.array([u[1], -u[0]]) * (0.025 if s < n else -0.025)
            paths.append(np.array([p + off, q + off]))
        vals = np.asarray(link_values, dtype=float)
        colors = cmap(norm(vals))
        colors[vals <= 0] = IDLE_LINK_COLOR
        coll = LineCollection(paths, colors=colors, linewidths=2.0 if n <= 16 else 0.9, zorder=1)
    ax.add_collection(coll, autolim=False)
    face = np.array([to_rgba(NODE_COLOR)] * n)
    if sides is not None:
        face[np.asarray(list(sides[0]), dtype=int)] = to_rgba(RANK_COLORS[4])
        face[np.asarray(list(sides[1]), dtype=int)] = to_rgba(RANK_COLORS[2])
    nodes = draw_circles(ax, pos, node_r, face)
    sw = FancyBboxPatch((-sw_half, -sw_half), 2 * sw_half, 2 * sw_half, boxstyle="round,pad=0.02",
                        facecolor="white", edgecolor=LINK_COLORS[klass], lw=2, zorder=4)
    ax.add_patch(sw)
    sw_name = "NVSwitch" if klass == "nvlink" else "switch"
    ax.text(0, 0, sw_name, ha="center", va="center", fontsize=FONT["annotation"] if n <= 16 else FONT["small"],
            zorder=5)
    texts = []
    if labels is None:
        labels = True
    if labels:
        word = "GPU " if (klass == "nvlink" and n <= 16) else ""
        for g in range(n):
            if n <= 16:
                texts.append(ax.text(*pos[g], f"{word}{g}" if not word else str(g), ha="center", va="center",
                                     fontsize=FONT["annotation"], zorder=5))
            else:
                texts.append(ax.text(*(pos[g] * (1 + node_r + 0.05)), str(g), ha="center", va="center",
                                     fontsize=FONT["tiny"], color=TEXT_COLOR, zorder=5))
    lim = 1.25 if n > 16 else 1.2
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    blank(ax)
    bw = format_rate(links.bandwidth[0])
    unit = "GPU" if klass == "nvlink" else "rank"
    ax.set_title(f"{topology_name(topology)}:\n{bw} each way from every {unit} into the switch",
                 fontsize=FONT["title"])
    cbar = None
    if link_values is not None:
        cbar = value_colorbar(fig, ax, cmap, norm, value_label)
    else:
        if n <= 16:   # the corner is empty beside a small star
            class_legend(ax, [(klass, f"{LINK_LABELS[klass]}, {bw}\neach way per {unit}")],
                         loc="lower right", bbox=(1.0, 0.0))
        else:         # a full circle of GPUs fills the corners: the legend goes below it
            class_legend(ax, [(klass, f"{LINK_LABELS[klass]}, {bw} each way per {unit}")],
                         loc="upper center", bbox=(0.5, -0.01))
    alt = (f"{n} {unit}s on a circle around one {sw_name}, each joined to it by a "
           f"{LINK_LABELS[klass]} link of {bw} each way.")
    return {"nodes": nodes, "links": coll, "switch": sw, "labels": texts, "colorbar": cbar,
            "figure": fig, "axes": ax, "alt": alt}


def _fat_tree_roles(cluster: GpuCluster):
    """Classify links: 'nvlink' (GPU<->NVSwitch), 'nic' (GPU<->leaf), 'uplink' (leaf<->spine)."""
    links = cluster.links
    n, m = cluster.num_ranks, cluster.num_nodes
    s, d = links.src, links.dst
    nvl = ((s < n) & (d >= n) & (d < n + m)) | ((d < n) & (s >= n) & (s < n + m))
    up = (s == cluster.spine_node) | (d == cluster.spine_node)
    nic = ~nvl & ~up
    return nvl, nic, up


def draw_fat_tree(cluster: GpuCluster, ax=None, *, aggregate: bool | None = None, link_values=None,
                  value_label: str = "link busy time", sides=None, title: str | None = None):
    """GPU nodes on a rail-optimised InfiniBand fat tree, link widths proportional to bandwidth.

    Bottom to top: each node's GPUs on its NVSwitch (NVLink), the leaf
    switches (one per rail per Scalable Unit), and the spine. Every GPU's NIC
    goes to its rail's leaf; each leaf's uplink carries 1/oversubscription of
    what its NICs inject, so an oversubscribed tree shows thinner uplinks.

    ``aggregate`` (default: more than 8 nodes) draws each Scalable Unit as one
    box and each rail's NICs as one bundle to its leaf, width by total
    bandwidth. ``link_values`` colours links by load (a bundle by its busiest
    link). ``sides`` (two lists of ranks) colours the halves of a cut.

    Returns ``{"nodes": PolyCollection (GPUs, or SU boxes when aggregated),
    "leaves", "spine", "links": LineCollection (one path per GPU NVLink, per
    GPU NIC and per leaf uplink; aggregated: per (SU, rail) bundle and per
    leaf uplink), "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba

    if not isinstance(cluster, GpuCluster):
        raise CollectivesError(f"draw_fat_tree draws a GpuCluster, not {cluster!r}")
    m, g, rails = cluster.num_nodes, cluster.gpus_per_node, cluster.rails
    n = cluster.num_ranks
    lay = fat_tree_layout(cluster, aggregate)
    aggregate = lay.aggregate
    links = cluster.links
    nvl, nic, up = _fat_tree_roles(cluster)
    fig, ax = axes_for(ax, 3.6 if ax is None else None)
    cmap = norm = None
    vals = None
    if link_values is not None:
        cmap, norm = value_norm(link_values)
        vals = np.asarray(link_values, dtype=float)
    y_gpu, y_leaf, y_spine = lay.levels["gpu"], lay.levels["leaf"], lay.levels["spine"]
    num_sus = cluster.num_sus
    leaf0 = n + m
    gpu_node = np.arange(n) // g
    gpu_su = gpu_node // cluster.nodes_per_su
    rail_of = (np.arange(n) % g) % rails
    paths, widths_bw, seg_of_link, seg_color = [], [], np.full(len(links), -1), []
    gpu_x, su_span, su_w, leaf_x = lay.gpus[:, 0], lay.sus, lay.su_width, lay.leaves[:, 0]
    xmin, xmax = lay.xlim
    spine_lo, spine_hi = lay.spine[:, 0]

    def add(path, bw, link_ids, color):
        k = len(paths)
        paths.append(np.asarray(path, dtype=float))
        widths_bw.append(bw)
        seg_of_link[np.asarray(link_ids, dtype=int)] = k
        seg_color.append(color)

    # leaf uplinks
    leaf_nodes = leaf0 + np.arange(cluster.num_leaves)
    for li, node in enumerate(leaf_nodes.tolist()):
        ids = np.nonzero(up & ((links.src == node) | (links.dst == node)))[0]
        bw = float(links.bandwidth[ids[0]])
        add([[leaf_x[li], y_leaf + 0.25], [leaf_x[li], y_spine - 0.3]], bw, ids, LINK_COLORS["ib"])
    if not aggregate:
        for r in range(n):
            ids_nvl = np.nonzero(nvl & ((links.src == r) | (links.dst == r)))[0]
            add([[gpu_x[r], y_gpu - 0.25], [gpu_x[r], y_gpu - 1.05]], float(links.bandwidth[ids_nvl[0]]),
                ids_nvl, LINK_COLORS["nvlink"])
            ids_nic = np.nonzero(nic & ((links.src == r) | (links.dst == r)))[0]
            leaf = int(gpu_su[r]) * rails + int(rail_of[r])
            add([[gpu_x[r], y_gpu + 0.25], [leaf_x[leaf], y_leaf - 0.25]], float(links.bandwidth[ids_nic[0]]),
                ids_nic, LINK_COLORS["ib"])
    else:
        for su in range(num_sus):
            lo, hi = su_span[su]
            for rail in range(rails):
                leaf = su * rails + rail
                gpus = np.nonzero((gpu_su == su) & (rail_of == rail))[0]
                ids = np.nonzero(nic & (np.isin(links.src, gpus) | np.isin(links.dst, gpus)))[0]
                bw = float(links.bandwidth[ids].sum() / 2)  # each direction
                x0 = lo + (hi - lo) * (rail + 0.5) / rails
                add([[x0, y_gpu + 0.6], [leaf_x[leaf], y_leaf - 0.25]], bw, ids, LINK_COLORS["ib"])
    widths = linewidth_for(widths_bw, max(widths_bw), max_width=7.0 if not aggregate else 4.0, min_width=0.6)
    if vals is not None:
        seg_val = np.zeros(len(paths))
        ok = seg_of_link >= 0
        np.maximum.at(seg_val, seg_of_link[ok], vals[ok])
        colors = cmap(norm(seg_val))
        colors[seg_val <= 0] = IDLE_LINK_COLOR
    else:
        colors = [to_rgba(c) for c in seg_color]
    coll = LineCollection(paths, colors=colors, linewidths=widths, zorder=1, capstyle="butt")
    ax.add_collection(coll, autolim=False)
    side_of = np.full(n, -1)
    if sides is not None:
        side_of[np.asarray(list(sides[0]), dtype=int)] = 0
        side_of[np.asarray(list(sides[1]), dtype=int)] = 1
    side_face = {-1: to_rgba(NODE_COLOR), 0: to_rgba(RANK_COLORS[4]), 1: to_rgba(RANK_COLORS[2])}
    texts = []
    nvs_labels = []
    if not aggregate:
        face = [side_face[int(s)] for s in side_of]
        nodes = PolyCollection(rects(gpu_x - 0.38, y_gpu - 0.25, 0.76, 0.5), facecolors=face,
                               edgecolors=NODE_EDGE_COLOR, linewidths=0.7, zorder=3)
        ax.add_collection(nodes, autolim=False)
        if n <= 64:
            for r in range(n):
                texts.append(ax.text(gpu_x[r], y_gpu, str(r % g), ha="center", va="center",
                                     fontsize=FONT["dense"], zorder=4))
        nvs_w = lay.nvswitch_width
        nvs = PolyCollection(rects(lay.nvswitches[:, 0] - nvs_w / 2, lay.nvswitches[:, 1] - 0.15, nvs_w, 0.3),
                             facecolors="white", edgecolors=LINK_COLORS["nvlink"], linewidths=1.2, zorder=3)
        ax.add_collection(nvs, autolim=False)
        nvs_labels = [ax.text(*lay.nvswitches[k], f"node {k} NVSwitch", ha="center", va="center",
                              fontsize=FONT["detail"], zorder=4) for k in range(m)]
    else:
        face = []
        for su in range(num_sus):
            sel = side_of[gpu_su == su]
            face.append(side_face[int(sel[0])] if len(sel) and (sel == sel[0]).all() else side_face[-1])
        lo = su_span[:, 0]
        nodes = PolyCollection(rects(lo, y_gpu - 1.2, su_w, 1.8), facecolors=face, edgecolors=NODE_EDGE_COLOR,
                               linewidths=0.8, zorder=3)
        ax.add_collection(nodes, autolim=False)
        for su in range(num_sus):
            k = int(np.sum(gpu_su == su)) // g
            texts.append(ax.text(lo[su] + su_w / 2, y_gpu - 0.3,
                                 f"SU {su}: {k} nodes\n\u00d7 {g} GPUs on NVLink", ha="center", va="center",
                                 fontsize=FONT["small"], zorder=4))
    lw_leaf = 0.8 if not aggregate else min(0.9, 0.8 * (xmax - xmin) / max(cluster.num_leaves, 1))
    leaves = PolyCollection(rects(leaf_x - lw_leaf / 2, y_leaf - 0.3, lw_leaf, 0.6),
                            facecolors=tint(LINK_COLORS["ib"], 0.25), edgecolors=LINK_COLORS["ib"],
                            linewidths=1.2, zorder=3)
    ax.add_collection(leaves, autolim=False)
    if not aggregate or cluster.num_leaves <= 16:
        for li in range(cluster.num_leaves):
            ax.text(leaf_x[li], y_leaf, f"L{li % rails}", ha="center", va="center",
                    fontsize=FONT["dense"], zorder=4)
    spine = PolyCollection(rects([spine_lo], [y_spine - 0.3], [spine_hi - spine_lo], [0.6]),
                           facecolors="white", edgecolors=LINK_COLORS["ib"], linewidths=1.5, zorder=3)
    ax.add_collection(spine, autolim=False)
    spine_label = ax.text((spine_lo + spine_hi) / 2, y_spine, "spine (modelled as one non-blocking switch)",
                          ha="center", va="center", fontsize=FONT["tick"], zorder=4)
    # tier notes on the left
    nic_bw = cluster.nic_bandwidth
    uplink = float(links.bandwidth[up][0])
    per_leaf_down = uplink * cluster.oversubscription
    ax.text(xmin - 0.3, y_leaf, "leaves\n(one per rail\nper SU)", ha="right", va="center", fontsize=FONT["small"])
    ax.text(xmin - 0.3, y_gpu - 0.4, "GPUs" if not aggregate else "Scalable\nUnits", ha="right",
            va="center", fontsize=FONT["small"])
    ax.text(xmin - 0.3, y_spine, "spine", ha="right", va="center", fontsize=FONT["small"])
    over = cluster.oversubscription
    note = (f"NIC {format_rate(nic_bw)} per GPU; NVLink {format_rate(cluster.nvlink_bandwidth)} per GPU; "
            f"leaf: {format_rate(per_leaf_down)} down, {format_rate(uplink)} up"
            + (f" ({over:g}:1 oversubscribed)" if over != 1 else " (full fat tree, 1:1)"))
    footer = ax.text(0.5, -0.01, note + "\nline widths proportional to bandwidth", transform=ax.transAxes,
                     ha="center", va="top", fontsize=FONT["tick"], color=TEXT_COLOR)
    ax.set_xlim(xmin - 3.2, xmax + 0.2)
    ax.set_ylim(y_gpu - 1.6, y_spine + 0.5)
    blank(ax)
    ax.set_title(title or f"{topology_name(cluster)} ({n} GPUs) on a rail-optimised InfiniBand fat tree",
                 fontsize=FONT["title"])
    cbar = value_colorbar(fig, ax, cmap, norm, value_label) if vals is not None else None
    alt = (f"{topology_name(cluster)} with {n} GPUs: "
           + ("each Scalable Unit drawn as a box with one bundle per rail up to its leaf switch"
              if aggregate else "each node's GPUs on an NVSwitch, every GPU's NIC going up to its rail's leaf switch")
           + f", and the leaves joined to the spine; leaf uplinks carry {format_rate(uplink)}"
           + (f", {over:g} to 1 oversubscribed" if over != 1 else ", a full fat tree") + ".")
    return {"nodes": nodes, "leaves": leaves, "spine": spine, "links": coll, "labels": texts,
            "spine_label": spine_label, "footer": footer, "nvswitch_labels": nvs_labels,
            "colorbar": cbar, "figure": fig, "axes": ax, "alt": alt}
