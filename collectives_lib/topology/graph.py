"""Graph algorithms on topologies: maximum flow (cut and bisection bandwidth) and
link-disjoint paths.

Introduced in the chapter *TPU cluster topology* (disjoint routes and bisection).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

def max_flow(topo, a: np.ndarray, b: np.ndarray) -> float:
    """Maximum flow from endpoint set ``a`` to endpoint set ``b`` (Dinic)."""
    links = topo.links
    n = topo.num_vertices
    side = np.zeros(n, dtype=np.int8)  # 0 free, 1 source side, 2 sink side
    side[a] = 1
    side[b] = 2
    assigned_endpoints = np.zeros(n, dtype=bool)
    assigned_endpoints[: topo.num_ranks] = True
    src_side, dst_side = side[links.src], side[links.dst]
    # if every node is assigned, the answer is the capacity of links crossing a -> b
    free_nodes = np.nonzero(side == 0)[0]
    # endpoints not on either side do not forward traffic for others unless they are
    # routers (tori); we let them forward, as chips on a torus do.
    if len(free_nodes) == 0:
        return float(links.bandwidth[(src_side == 1) & (dst_side == 2)].sum())
    # contract: S = every side-1 node, T = every side-2 node
    node_id = np.full(n, -1, dtype=np.int64)
    node_id[free_nodes] = np.arange(len(free_nodes))
    S, T = len(free_nodes), len(free_nodes) + 1
    node_id[side == 1] = S
    node_id[side == 2] = T
    u = node_id[links.src]
    v = node_id[links.dst]
    keep = u != v
    cap: dict[tuple[int, int], float] = {}
    for x, y, c in zip(u[keep].tolist(), v[keep].tolist(), links.bandwidth[keep].tolist()):
        cap[(x, y)] = cap.get((x, y), 0.0) + c
    return dinic(len(free_nodes) + 2, cap, S, T)


def dinic(num: int, cap: dict[tuple[int, int], float], s: int, t: int) -> float:
    graph: list[list[int]] = [[] for _ in range(num)]
    to: list[int] = []
    res: list[float] = []
    for (x, y), c in cap.items():
        graph[x].append(len(to))
        to.append(y)
        res.append(c)
        graph[y].append(len(to))
        to.append(x)
        res.append(0.0)
    total = 0.0
    eps = 1e-9
    while True:
        level = [-1] * num
        level[s] = 0
        q = deque([s])
        while q:
            x = q.popleft()
            for e in graph[x]:
                if res[e] > eps and level[to[e]] < 0:
                    level[to[e]] = level[x] + 1
                    q.append(to[e])
        if level[t] < 0:
            return total
        it = [0] * num

        def augment() -> float:
            """One blocking-flow path from s to t, pushed; its flow (0 when none is
            left). Iterative, so a line of thousands of vertices needs no deep stack."""
            path: list[int] = []           # edges from s
            x = s
            while True:
                if x == t:
                    pushed = min(res[e] for e in path)
                    for e in path:
                        res[e] -= pushed
                        res[e ^ 1] += pushed
                    return pushed
                while it[x] < len(graph[x]):
                    e = graph[x][it[x]]
                    if res[e] > eps and level[to[e]] == level[x] + 1:
                        break
                    it[x] += 1
                if it[x] < len(graph[x]):
                    e = graph[x][it[x]]
                    path.append(e)
                    x = to[e]
                    continue
                if not path:                # s has no way on
                    return 0.0
                e = path.pop()              # a dead end: retreat and skip the edge into it
                x = to[e ^ 1]
                it[x] += 1

        while True:
            pushed = augment()
            if pushed <= eps:
                break
            total += pushed


def disjoint_paths_between(topo, src: int, dst: int) -> list[list[int]]:
    """Successive shortest paths with unit capacities: max link-disjoint paths, min total hops."""
    if src == dst:
        return [[src]]
    links = topo.links
    num_links = len(links)
    used = np.zeros(num_links, dtype=bool)
    out_links = topo.out_links
    in_links: list[list[int]] = [[] for _ in range(topo.num_vertices)]
    for i, v in enumerate(links.dst.tolist()):
        in_links[v].append(i)
    lsrc, ldst = links.src.tolist(), links.dst.tolist()
    count = 0
    while True:
        # Bellman-Ford style shortest path in the residual graph (costs +1 forward, -1 back)
        dist = {src: 0}
        prev: dict[int, tuple[int, int]] = {}
        # residual costs can be negative; use label-correcting (SPFA)
        queue = deque([src])
        inq = {src}
        while queue:
            x = queue.popleft()
            inq.discard(x)
            dx = dist[x]
            for e in out_links[x]:
                if not used[e]:
                    y = ldst[e]
                    if dx + 1 < dist.get(y, math.inf):
                        dist[y] = dx + 1
                        prev[y] = (e, +1)
                        if y not in inq:
                            queue.append(y)
                            inq.add(y)
            for e in in_links[x]:
                if used[e]:
                    y = lsrc[e]
                    if dx - 1 < dist.get(y, math.inf):
                        dist[y] = dx - 1
                        prev[y] = (e, -1)
                        if y not in inq:
                            queue.append(y)
                            inq.add(y)
        if dst not in dist:
            break
        y = dst
        while y != src:
            e, sign = prev[y]
            if sign > 0:
                used[e] = True
                y = lsrc[e]
            else:
                used[e] = False
                y = ldst[e]
        count += 1
    # decompose the used links into paths
    remaining = {}
    for e in np.nonzero(used)[0].tolist():
        remaining.setdefault(lsrc[e], []).append(e)
    paths = []
    for _ in range(count):
        path = [src]
        x = src
        while x != dst:
            e = remaining[x].pop()
            x = ldst[e]
            path.append(x)
        paths.append(path)
    paths.sort(key=len)
    return paths
