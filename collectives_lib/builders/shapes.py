"""The shapes of NCCL's trees as parent arrays: its binary tree, the double binary tree
(two complementary trees), and the height and depth of every node. Read by the tree
builders (:mod:`.trees`, :mod:`.hierarchical`) and by the closed forms over a cluster's
tiers (:mod:`.tiers`)."""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError


def nccl_binary_tree(n: int) -> np.ndarray:
    """The binary tree NCCL builds over ``n`` nodes (``ncclGetBtree`` in trees.cc),
    as a parent array (-1 at the root, node 0).

    Node ``r > 0`` with lowest set bit ``b`` hangs from ``r`` with that bit moved up
    one place (``r + b`` where bit ``2b`` of ``r`` is clear, ``r - b`` where it is
    set), or from ``r - b`` where that would leave the range. Node 0's one child is
    the largest power of two below ``n``; for ``n = 2^k`` the tree has height ``k``,
    and its leaves are the odd nodes::

        n = 8:   0 -> 4 -> {2, 6},  2 -> {1, 3},  6 -> {5, 7}
    """
    parent = np.full(n, -1, dtype=np.int64)
    for r in range(1, n):
        b = r & -r
        up = r - b if r & (2 * b) else r + b
        parent[r] = up if up < n else r - b
    return parent


def double_binary_tree(n: int) -> tuple[np.ndarray, np.ndarray]:
    """NCCL's two complementary trees over ``n`` nodes (``ncclGetDtree``): the binary
    tree, and for even ``n`` its mirror image (node ``r`` plays ``n-1-r``), for odd
    ``n`` the tree shifted by one (node ``r`` plays ``r-1``). The binary tree's
    interior nodes are even, the mirror's odd, so for even ``n`` every node is
    interior in at most one tree and each NIC carries about the same traffic
    (shifting, for odd ``n``, leaves node 0 interior in both)."""
    first = nccl_binary_tree(n)
    r = np.arange(n)
    if n % 2 == 0:
        play = n - 1 - r
        up = first[play]
        second = np.where(up < 0, -1, n - 1 - up)
    else:
        play = (r - 1) % n
        up = first[play]
        second = np.where(up < 0, -1, (up + 1) % n)
    return first, second.astype(np.int64)


def tree_levels(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(height, depth)`` of every node of a tree given as a parent array: height
    0 at the leaves (the longest way down to one), depth 0 at the root."""
    parent = np.asarray(parent, dtype=np.int64)
    n = len(parent)
    if (parent < 0).sum() != 1:
        raise CollectivesError(f"a tree has exactly one root, got {int((parent < 0).sum())}")
    depth = np.zeros(n, dtype=np.int64)
    up = parent.copy()
    for _ in range(n):
        live = up >= 0
        if not live.any():
            break
        depth[live] += 1
        up = np.where(live, parent[np.maximum(up, 0)], -1)
    else:
        raise CollectivesError("the parent array has a cycle: it is not a tree")
    height = np.zeros(n, dtype=np.int64)
    for d in range(int(depth.max(initial=0)), 0, -1):
        at = np.nonzero(depth == d)[0]
        np.maximum.at(height, parent[at], height[at] + 1)
    return height, depth
