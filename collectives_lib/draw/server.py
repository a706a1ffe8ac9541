"""Inside one GPU server: the PCIe tree with the GPUDirect RDMA path, and eight
GPUs joined pair by pair (a full mesh) against the same eight on a switch.

Introduced in the chapter *Moving bytes*. Each function returns its artists
in a dict with ``"figure"``, ``"axes"`` and ``"alt"``.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..topology import FullMesh, Switch
from ..units import format_rate
from .alpha_beta import detached_panels
from .figure import axes_for, blank, label_axes, legend
from .schemes import label_box
from .style import FONT, LINK_COLORS, MUTED_COLOR, NODE_COLOR, NODE_EDGE_COLOR, ROUTE_COLOR


def draw_pcie_tree(ax=None):
    """One PCIe tree of a GPU server: the CPU's root complex (with host memory)
    at the top, two PCIe switches under it, each with two GPUs and a network
    card, and an NVMe drive on one. Two routes for the same bytes from GPU 0
    to the network: without GPUDirect RDMA they are copied up through the root
    complex into host memory and read back down by the card (dotted, muted);
    with GPUDirect RDMA the card reads GPU 0's memory through their shared
    PCIe switch (solid, highlighted), and the host is not on the path.

    Returns ``{"nodes": dict name -> patch, "links": list of lines, "routes":
    {"staged": line, "gpudirect": line}, "figure", "axes", "alt"}``.
    """
    fig, ax = axes_for(ax, 3.6, pyplot=False)
    where = {"host memory": (-2.2, 2.0), "CPU root complex": (0.0, 2.0),
             "PCIe switch 0": (-1.5, 1.0), "PCIe switch 1": (1.5, 1.0),
             "GPU 0": (-2.3, 0.0), "GPU 1": (-1.5, 0.0), "NIC 0": (-0.7, 0.0),
             "GPU 2": (0.7, 0.0), "GPU 3": (1.5, 0.0), "NIC 1": (2.3, 0.0), "NVMe": (3.1, 1.0),
             "network": (-0.7, -1.05)}
    edges = [("host memory", "CPU root complex"), ("CPU root complex", "PCIe switch 0"),
             ("CPU root complex", "PCIe switch 1"), ("CPU root complex", "NVMe"),
             *[("PCIe switch 0", d) for d in ("GPU 0", "GPU 1", "NIC 0")],
             *[("PCIe switch 1", d) for d in ("GPU 2", "GPU 3", "NIC 1")]]
    links = []
    for k, (a, b) in enumerate(edges):
        # every link here is PCIe: drawn solid, so dots mean only the copy through host memory
        (ln,) = ax.plot(*np.array([where[a], where[b]]).T, color=LINK_COLORS["pcie"], ls="-",
                        lw=1.4, zorder=1, label="PCIe link" if k == 0 else None)
        links.append(ln)
    (net,) = ax.plot(*np.array([where["NIC 0"], where["network"]]).T, color=LINK_COLORS["ib"], lw=1.6, zorder=1)
    links.append(net)
    staged_path = ["GPU 0", "PCIe switch 0", "CPU root complex", "host memory", "CPU root complex",
                   "PCIe switch 0", "NIC 0"]
    offset = np.array([0.0, 0.12])
    pts = np.array([where[p] for p in staged_path]) + offset
    (staged,) = ax.plot(*pts.T, color=MUTED_COLOR, ls=":", lw=2.2, zorder=2,
                        label="without GPUDirect: a copy through host memory")
    pts = np.array([where[p] for p in ("GPU 0", "PCIe switch 0", "NIC 0", "network")]) - offset
    (direct,) = ax.plot(*pts.T, color=ROUTE_COLOR, lw=2.4, zorder=2,
                        label="GPUDirect RDMA: NIC reads GPU memory under its switch")
    from matplotlib.patches import FancyBboxPatch

    nodes = {}
    for name, (x, y) in where.items():
        label = name.replace(" root complex", "\nroot complex").replace("host memory", "host\nmemory")
        w = 0.95 if name in ("CPU root complex", "host memory", "network") else 0.7
        patch = FancyBboxPatch((x - w / 2, y - 0.22), w, 0.44, boxstyle="round,pad=0.02", fc=NODE_COLOR,
                               ec=NODE_EDGE_COLOR, lw=0.9, zorder=3)
        ax.add_patch(patch)
        ax.text(x, y, label, ha="center", va="center", fontsize=FONT["small"], zorder=4)
        nodes[name] = patch
    legend(ax, loc="lower left", bbox_to_anchor=(0.42, 0.0))
    ax.set(xlim=(-3.0, 3.6), ylim=(-1.35, 2.35))
    blank(ax)
    label_axes(ax, "One PCIe tree of a GPU server, and two ways from GPU 0 to the network",
               title_role="label")
    alt = ("A PCIe tree: the CPU root complex with host memory on top, two PCIe switches below it, each "
           "with two GPUs and a network card, and an NVMe drive. A dotted path from GPU 0 climbs to host "
           "memory and back down to the card; a solid path goes from GPU 0 through its PCIe switch "
           "straight to the card and the network.")
    return {"nodes": nodes, "links": links, "routes": {"staged": staged, "gpudirect": direct},
            "figure": fig, "axes": ax, "alt": alt}


def draw_mesh_and_switch(mesh: FullMesh, node: Switch, ax=None):
    """Two panels: the GPUs of ``mesh`` joined pair by pair (each pair at
    ``mesh.bandwidth``), and the GPUs of ``node`` on one switch (any pair at the
    GPU's full rate). Used in *Moving bytes* to show why eight GPUs need a switch.

    Returns ``{"links": LineCollection (one line per pair), "switch": the
    :func:`~collectives_lib.draw.draw_switch` dict, "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection

    from .networks import draw_switch

    if not isinstance(mesh, FullMesh) or not isinstance(node, Switch):
        raise CollectivesError(f"draw_mesh_and_switch takes a FullMesh and a Switch, got {mesh!r} and {node!r}")
    n = mesh.num_ranks
    fig, (left, right) = detached_panels(ax, 2, 3.2)
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    xy = np.c_[np.cos(angles), np.sin(angles)]
    pairs = [xy[[a, b]] for a in range(n) for b in range(a + 1, n)]
    lines = LineCollection(pairs, colors=LINK_COLORS["nvlink"], linewidths=1.2, zorder=1)
    left.add_collection(lines)
    for r, p in enumerate(xy):
        label_box(left, p, str(r), size=0.24, role="annotation")
    left.set(xlim=(-1.3, 1.3), ylim=(-1.3, 1.3), aspect="equal")
    blank(left)
    label_axes(left, f"full mesh: {mesh.num_pair_links} pair links,\n"
               f"{format_rate(mesh.bandwidth)} each way per pair", title_role="label")
    art = draw_switch(node, ax=right)
    if right.get_legend() is not None:
        right.get_legend().remove()   # the title says it
    label_axes(right, f"switch: any pair at\n{format_rate(node.bandwidth)} each way", title_role="label")
    alt = (f"Left: {n} GPUs joined pairwise by {mesh.num_pair_links} thin links. Right: {node.num_ranks} "
           "GPUs each joined to one switch by a thick link.")
    return {"links": lines, "switch": art, "figure": fig, "axes": [left, right], "alt": alt}
