"""Time the collectives an HLO module runs, on a topology.

:func:`time_hlo` takes what :func:`~collectives_lib.hlo.parse_hlo` reads and
times every collective with :func:`collectives_lib.estimate`. Device ``i`` of
the module (partition id ``i``: position ``i`` in the JAX mesh, row-major) runs
on rank ``devices[i]`` of the topology (``devices=None``: rank ``i``). A
collective runs over the topology axes whose rank groups are its groups; on a
GPU preset given the program's ``mesh``, over the mesh's axes laid row-major on
the GPUs (:func:`collectives_lib.topology.with_mesh`). Groups that fit neither
are refused, naming the mappings tried.

Permutes (``collective-permute``) are timed as what they are, one step of
concurrent point-to-point transfers: under the ideal model every pair is routed
on the topology and pairs that share a link share its bandwidth
(:func:`collectives_lib.analysis.time_flows`); under NCCL's model they are a
grouped send/recv, each pair priced by :func:`collectives_lib.nccl.p2p.send`.
Their lower bound is the busiest endpoint (what a source must send over its
links, a target receive over its) and the longest route's latency.

>>> import collectives_lib as cl
>>> from collectives_lib.hlo import parse_hlo
>>> module = parse_hlo('''HloModule m, num_partitions=8
... %add (a: f32[], b: f32[]) -> f32[] {
...   %a = f32[] parameter(0)
...   %b = f32[] parameter(1)
...   ROOT %s = f32[] add(%a, %b)
... }
... ENTRY %main (p: f32[1024]) -> f32[1024] {
...   %p = f32[1024]{0} parameter(0)
...   ROOT %ar = f32[1024]{0} all-reduce(%p), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true, to_apply=%add
... }''')
>>> timing = time_hlo(module, cl.tpu_slice("v5e", "4x2"), mesh="x=4,y=2")
>>> row = timing.rows[0]
>>> row.mesh_axes, row.topology_axes, row.estimate.group_size, row.estimate.num_groups
(('x',), ('x',), 4, 2)
>>> timing.total == row.time
True

Introduced in the chapter *From your code to the wire*.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from .held import paused_gc
from ..errors import CollectivesError
from ..models import MODELS, Estimate, default_model, sweep
from ..topology import Topology
from ..units import format_bytes, format_time
from .groups import format_groups
from .mesh import mesh_axes, mesh_sizes
from .parse import parse_hlo
from .records import HloCollective, HloModule
from .text import ELEMENT_BITS, clip, short_errors

__all__ = ["HloRow", "HloTiming", "PermuteTiming", "time_hlo", "time_permute", "permute_schedule",
           "topology_axes", "library_dtype", "chip_ranks"]

#: XLA element type -> the library's dtype name (what NCCL's model is told).
_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64",
           "s8": "int8", "u8": "uint8", "pred": "uint8", "s32": "int32", "u32": "uint32",
           "s64": "int64", "u64": "uint64", "f8e4m3fn": "float8_e4m3", "f8e4m3": "float8_e4m3",
           "f8e5m2": "float8_e5m2"}
_BY_SIZE = {1: "uint8", 2: "float16", 4: "float32", 8: "float64"}


def library_dtype(hlo_dtype: str) -> str:
    """The library's dtype for an XLA element type (``"bf16"`` -> ``"bfloat16"``);
    types the library does not name go by their size (``c64`` -> ``float64``)."""
    first = str(hlo_dtype).split("+")[0]
    if first in _DTYPES:
        return _DTYPES[first]
    bits = ELEMENT_BITS.get(first)
    if bits is None:
        raise CollectivesError(f"unknown XLA element type {hlo_dtype!r}")
    return _BY_SIZE.get(max(1, bits // 8), "uint8")


def chip_ranks(coords, topology: Topology) -> list[int]:
    """The topology's rank of each chip coordinate: ``coords[i]`` is the chip of mesh
    position ``i`` (``[d.coords for d in mesh.devices.flat]`` in JAX), ranks
    row-major over the slice's ``dims`` (x slowest).

    >>> import collectives_lib as cl
    >>> chip_ranks([(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)], cl.tpu_slice("v5e", "2x2"))
    [0, 2, 1, 3]
    """
    dims = getattr(topology, "dims", None)
    if dims is None:
        raise CollectivesError(f"chip coordinates need a TPU slice or torus, not {topology!r}")
    out = []
    for c in coords:
        c = tuple(int(v) for v in c)
        if any(v != 0 for v in c[len(dims):]) or len(c) < len(dims) or any(
                not 0 <= v < d for v, d in zip(c, dims)):
            raise CollectivesError(f"chip {c} is not on {topology!r} (dims {tuple(dims)})")
        out.append(int(np.ravel_multi_index(c[:len(dims)], dims)))
    if sorted(out) != list(range(topology.num_ranks)):
        raise CollectivesError(f"the chips do not cover {topology!r} once each")
    return out


@short_errors()
def topology_axes(groups, topology: Topology) -> tuple[str, ...]:
    """The axes of ``topology`` whose rank groups are ``groups`` (device ids = ranks).

    ``groups`` is a :class:`~collectives_lib.hlo.HloCollective` or a list of groups.
    ``()`` means groups of one device (nothing moves).
    """
    if isinstance(groups, HloCollective):
        if groups.num_devices != topology.num_ranks:
            raise CollectivesError(
                f"the module runs on {groups.num_devices} devices but {topology!r} has "
                f"{topology.num_ranks} ranks: pick a topology of {groups.num_devices}")
        groups = groups.replica_groups
    found = _fit_axes(tuple(tuple(int(v) for v in g) for g in groups), topology)
    if found is None:
        raise CollectivesError(
            f"replica groups {format_groups(groups)} are not the groups of any axes of "
            f"{topology!r} ({_axes_text(topology)}, ranks numbered row-major): pick a topology "
            f"whose axes match the mesh")
    return found


def _axes_text(topology: Topology) -> str:
    return "axes " + ", ".join(f"{a}={s}" for a, s in zip(topology.axis_names, topology.mesh_shape))


def _fit_axes(groups, topology: Topology) -> tuple[str, ...] | None:
    if all(len(g) == 1 for g in groups):
        return ()
    want = {frozenset(g) for g in groups}
    size = len(groups[0])
    names = list(topology.axis_names)
    shape = dict(zip(names, topology.mesh_shape))
    for k in range(1, len(names) + 1):
        for subset in itertools.combinations(names, k):
            if int(np.prod([shape[a] for a in subset])) != size:
                continue
            try:
                got = topology.axis_groups(list(subset))
            except CollectivesError:
                continue
            if {frozenset(int(v) for v in g) for g in np.asarray(got).tolist()} == want:
                return tuple(subset)
    return None


@dataclass(frozen=True)
class PermuteTiming:
    """A collective-permute timed: concurrent transfers from sources to targets."""

    model: str
    time: float
    bound: object                   # collectives_lib.bounds.Bound
    pairs: int
    crosses: str                    # what the busiest pair crosses
    result: object = field(default=None, repr=False)   # the simulator's, ideal model

    @property
    def label(self) -> str:
        return "grouped send/recv" if self.model == "nccl" else "routed pairs"

    algorithm = label

    @property
    def efficiency(self) -> float:
        return self.bound.efficiency(self.time)


@dataclass(frozen=True)
class HloRow:
    """One collective of a module, timed: ``time`` counts its repeats."""

    collective: HloCollective
    mesh_axes: tuple[str, ...] | None
    topology_axes: tuple[str, ...]
    estimate: Estimate | PermuteTiming | None     # None: not timed (see ``note``)
    note: str = ""

    @property
    def repeats(self) -> int:
        return 1 if self.collective.repeats is None else self.collective.repeats

    @property
    def time(self) -> float:
        """Seconds one run of the program spends in it (0 when not timed)."""
        e, n = self.estimate, self.collective.repeats        # (summed over 20,000 rows: no
        return 0.0 if e is None else e.time * (1 if n is None else n)   # property inside)

    @property
    def bound(self) -> float:
        e, n = self.estimate, self.collective.repeats
        return 0.0 if e is None else e.bound.time * (1 if n is None else n)

    def as_dict(self) -> dict:
        c, e = self.collective, self.estimate
        groups = ([list(p) for p in c.source_target_pairs] if c.kind == "collective_permute"
                  else [list(g) for g in c.replica_groups])
        return {
            "name": c.name, "kind": c.kind, "line": c.line,
            "operands": [str(a) for a in c.operands], "results": [str(a) for a in c.results],
            "dtype": c.dtype, "nbytes": c.nbytes,
            "replica_groups" if c.kind != "collective_permute" else "source_target_pairs": groups,
            "mesh_axes": None if self.mesh_axes is None else list(self.mesh_axes),
            "topology_axes": list(self.topology_axes),
            "repeats": c.repeats, "folded": list(c.folded), "overlaps": list(c.overlaps),
            "algorithm": None if e is None else e.label,
            "model": None if e is None else e.model,
            "time_s": None if e is None else e.time,
            "total_time_s": self.time,
            "lower_bound_s": None if e is None else e.bound.time,
            "efficiency": None if e is None else e.efficiency,
            "note": self.note,
        }


@dataclass(frozen=True)
class HloTiming:
    """Every collective of a module timed on one topology, and their total."""

    module: HloModule
    topology: Topology = field(repr=False)
    model: str
    mesh: dict | None
    rows: tuple[HloRow, ...]
    devices: tuple[int, ...] | None = None

    @property
    def total(self) -> float:
        """Seconds in collectives per run, run one after another (no overlap)."""
        return sum(r.time for r in self.rows)

    @property
    def total_bound(self) -> float:
        return sum(r.bound for r in self.rows)

    @property
    def total_bytes(self) -> int:
        return sum(r.collective.nbytes * (1 if r.collective.repeats is None else r.collective.repeats)
                   for r in self.rows)

    @property
    def overlapped(self) -> float:
        """Seconds of collectives the module schedules beside a matmul (``overlaps``)."""
        return sum(r.time for r in self.rows if r.collective.overlaps)

    def table(self) -> list[list[str]]:
        """The rows as strings, header first (what ``collectives hlo`` prints)."""
        head = ["name", "kind", "operands", "dtype", "bytes", "groups", "mesh axes",
                "algorithm", "time", "bound", "times"]
        out = [head]
        groups: dict = {}            # (kind, groups or pairs) -> their text: a module repeats a few
        for r in self.rows:
            c, e = r.collective, r.estimate
            axes = "-" if r.mesh_axes is None else (",".join(r.mesh_axes) or "(one device)")
            key = (c.kind, c.replica_groups, c.source_target_pairs)
            text = groups.get(key)
            if text is None:
                text = groups[key] = c.groups_text().replace(" x ", "x")
            out.append([c.name, c.kind, ", ".join(map(str, c.operands)), c.dtype,
                        format_bytes(c.nbytes), text, axes,
                        "-" if e is None else e.label,
                        "-" if e is None else format_time(e.time),
                        "-" if e is None else format_time(e.bound.time),
                        "?" if c.repeats is None else str(c.repeats)])
        return out

    def brief(self) -> str:
        """A narrow table (kind, mesh axes, bytes, algorithm, time) and the total,
        for pages and terminals of 80 columns."""
        rows = [["kind", "axes", "bytes", "algorithm", "time"]]
        for r in self.rows:
            c, e = r.collective, r.estimate
            axes = "-" if r.mesh_axes is None else ",".join(r.mesh_axes) or "one"
            times = "" if r.repeats == 1 else f" x{r.repeats}"
            rows.append([c.kind, axes, format_bytes(c.nbytes), "-" if e is None else e.label,
                         "-" if e is None else format_time(e.time) + times])
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(v.rjust(w) if i in (2, 4) else v.ljust(w)
                           for i, (v, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
        model = "NCCL model" if self.model == "nccl" else "ideal link model"
        lines.append(f"total {format_time(self.total)} ({model}), lower bound "
                     f"{format_time(self.total_bound)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        with paused_gc():
            return self._text()

    def _text(self) -> str:
        rows = self.table()
        widths = [max(map(len, column)) for column in zip(*rows)]
        line = "  ".join(f"{{:<{w}}}" for w in widths).format     # each column left-aligned
        lines = [line(*r).rstrip() for r in rows]
        model = ("NCCL's model" if self.model == "nccl" else "the ideal link model")
        head = (f"{self.module.name}: {len(self.rows)} collectives on {self.topology!r}, "
                f"{model}")
        total = (f"total {format_time(self.total)} per run (one after another), lower bound "
                 f"{format_time(self.total_bound)}, {format_bytes(self.total_bytes)} per device")
        notes = [f"{r.collective.name}: {r.note}" for r in self.rows if r.note]
        return "\n".join([head] + lines + [total] + notes + list(self.module.notes))

    def as_dict(self) -> dict:
        with paused_gc():
            return self._dict()

    def _dict(self) -> dict:
        return {"module": self.module.name, "num_devices": self.module.num_devices,
                "topology": repr(self.topology), "model": self.model, "mesh": self.mesh,
                "devices": None if self.devices is None else list(self.devices),
                "collectives": [r.as_dict() for r in self.rows],
                "total_time_s": self.total, "total_lower_bound_s": self.total_bound,
                "total_bytes": self.total_bytes, "notes": list(self.module.notes)}


def _check_devices(devices, n: int) -> np.ndarray | None:
    if devices is None:
        return None
    try:
        ids = np.asarray([int(v) for v in np.asarray(devices, dtype=object).ravel()], dtype=np.int64)
    except (TypeError, ValueError):
        raise CollectivesError(f"devices must be a list of ranks, got {devices!r}") from None
    if len(ids) != n or sorted(ids.tolist()) != list(range(n)):
        raise CollectivesError(f"devices must give each of the module's {n} devices a distinct "
                               f"rank 0..{n - 1}, got {ids.tolist()[:16]}")
    return ids


@short_errors()
def time_hlo(module, topology: Topology, *, mesh=None, devices=None, model: str | None = None,
             algorithm: str = "auto") -> HloTiming:
    """Time every collective of ``module`` (an :class:`~collectives_lib.hlo.HloModule`
    or HLO text) on ``topology``, with the ideal link model or NCCL's model
    (``model=None``: NCCL's on GPU presets, ideal elsewhere).

    ``mesh`` (``"x=4,y=2"``, a dict or a ``jax.sharding.Mesh``) names the axes
    each collective spans in the program's terms; its size must be the
    module's. ``devices[i]`` is the rank that runs the module's device ``i``
    (the device assignment: on a TPU slice :func:`chip_ranks` of the mesh's
    chips; ``jax.make_mesh`` does not lay a mesh row-major on the chips). A loop
    whose trip count is not in the text counts once, with a note.
    """
    if not isinstance(module, HloModule):
        module = parse_hlo(module)
    if not isinstance(topology, Topology):
        raise CollectivesError(f"topology must be a Topology, got {topology!r}")
    if module.num_devices != topology.num_ranks:
        raise CollectivesError(
            f"module {module.name} runs on {module.num_devices} devices but {topology!r} has "
            f"{topology.num_ranks} ranks: pick a topology of {module.num_devices}")
    mesh_dict = None
    if mesh is not None:
        mesh_dict = mesh_sizes(mesh)
        size = int(np.prod(list(mesh_dict.values())))
        if size != module.num_devices:
            raise CollectivesError(
                f"mesh {','.join(f'{a}={s}' for a, s in mesh_dict.items())} has {size} "
                f"devices but module {module.name} runs on {module.num_devices}")
    if model is not None and str(model).strip().lower() not in MODELS:
        raise CollectivesError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    used = default_model(topology) if model is None else str(model).strip().lower()
    ranks = _check_devices(devices, module.num_devices)
    timer = _Timer(topology, mesh_dict, ranks, model, algorithm)
    with paused_gc():          # an answer per collective: many objects, in no cycle
        rows = timer.rows(module)
    return HloTiming(module, topology, used, mesh_dict, rows,
                     None if ranks is None else tuple(int(r) for r in ranks))


class _Timer:
    """Times the collectives of one module, each distinct question once."""

    def __init__(self, topology, mesh, ranks, model, algorithm):
        self.topology, self.mesh, self.ranks = topology, mesh, ranks
        self.model, self.algorithm = model, algorithm
        self.cache: dict = {}
        self.views: dict = {}
        self.fits: dict = {}
        self.axes: dict = {}
        self.topos: dict = {}
        self.written: dict = {}     # groups (or ("pairs", pairs)) as written -> their fit (pairs)

    def rows(self, module: HloModule) -> tuple[HloRow, ...]:
        """Every collective's row: the questions first (topology and axes of each), then
        one sweep per distinct question over all its sizes, then the rows."""
        plans = [self.plan(c) for c in module]
        sizes: dict = {}
        for plan in plans:
            if plan[0] == "estimate":
                sizes.setdefault(plan[1], set()).add(plan[2])
        for (kind, topo_id, axes, dtype), wanted in sizes.items():
            wanted = sorted(wanted)
            got = sweep(kind, self.topos[topo_id], wanted, self.algorithm, axes=list(axes), model=self.model,
                        dtype=library_dtype(dtype))
            self.cache.update({((kind, topo_id, axes, dtype), n): e for n, e in zip(wanted, got)})
        return tuple(self.row(c, plan) for c, plan in zip(module, plans))

    def plan(self, c: HloCollective):
        """What to ask for ``c``: its groups (or pairs) as written are mapped to ranks and
        fitted to axes once for all the collectives that write the same."""
        if c.kind == "collective_permute":
            pairs = self.written.get(("pairs", c.source_target_pairs))
            if pairs is None:
                pairs = tuple((self._rank(s), self._rank(t)) for s, t in c.source_target_pairs
                              if s != t)
                self.written[("pairs", c.source_target_pairs)] = pairs
            if pairs and not c.nbytes:
                return ("nothing", (), _empty_note(c))
            return ("permute", pairs, c.nbytes)
        fit = self.written.get(c.replica_groups)
        if fit is None:
            groups = (c.replica_groups if self.ranks is None else
                      tuple(tuple(self._rank(v) for v in g) for g in c.replica_groups))
            if groups not in self.fits:
                self.fits[groups] = self._fit(groups, c)
            fit = self.written[c.replica_groups] = self.fits[groups]
        topo, axes_t = fit
        if not axes_t:
            return ("nothing", (), "groups of one device: nothing moves")
        if not c.nbytes:
            return ("nothing", axes_t, _empty_note(c))
        self.topos[id(topo)] = topo
        return ("estimate", (c.kind, id(topo), axes_t, c.dtype), c.nbytes)

    def row(self, c: HloCollective, plan) -> HloRow:
        axes_m = None
        if self.mesh is not None:
            key = (c.kind == "collective_permute", c.source_target_pairs or c.replica_groups)
            if key not in self.axes:
                self.axes[key] = mesh_axes(c, self.mesh)
            axes_m = self.axes[key]
        if plan[0] == "nothing":
            return HloRow(c, axes_m, plan[1], None, plan[2])
        if plan[0] == "permute":
            if not plan[1]:
                return HloRow(c, axes_m, (), None, "every pair sends to itself: nothing moves")
            if plan[1:] not in self.cache:
                self.cache[plan[1:]] = time_permute(self.topology, plan[1], plan[2],
                                                    model=self.model)
            return HloRow(c, axes_m, (), self.cache[plan[1:]], _loop_note(c))
        return HloRow(c, axes_m, plan[1][2], self.cache[plan[1:]], _loop_note(c))

    def _rank(self, device: int) -> int:
        return int(device) if self.ranks is None else int(self.ranks[device])

    def _fit(self, groups, c: HloCollective):
        found = _fit_axes(groups, self.topology)
        if found is not None:
            return self.topology, found
        from ..topology import mesh_applies, with_mesh
        tried = [f"{self.topology!r} ({_axes_text(self.topology)})"]
        gpu = mesh_applies(self.topology)
        if self.mesh is not None and gpu:
            key = tuple(self.mesh.items())
            if key not in self.views:
                self.views[key] = with_mesh(self.topology, self.mesh)
            found = _fit_axes(groups, self.views[key])
            if found is not None:
                return self.views[key], found
            tried.append(f"the mesh {','.join(f'{a}={s}' for a, s in key)} laid row-major on "
                         f"its ranks")
        hint = ("give the program's mesh (mesh=, --mesh) to lay its axes on the GPUs"
                if gpu and self.mesh is None else
                "pick a topology whose axes match the mesh, or give the device assignment "
                "(devices=, --devices)")
        covered = sum(len(g) for g in groups)
        if covered != self.topology.num_ranks:
            raise CollectivesError(
                f"{clip(c.name, 40)}: replica groups {format_groups(groups)} cover "
                f"{covered:,} of the module's {c.num_devices:,} devices: no axes of a "
                f"topology group them")
        raise CollectivesError(
            f"{clip(c.name, 40)}: replica groups {format_groups(groups)} (as ranks) "
            f"fit no axes of {' nor '.join(tried)}: {hint}")


def _empty_note(c: HloCollective) -> str:
    # XLA keeps a collective of zero-element arrays in unoptimized text (jax.lax.psum
    # of an f32[0] lowers to one; the compiler removes it): it moves nothing
    shapes = clip(", ".join(map(str, c.operands)), 40)
    return f"0 bytes ({shapes}): nothing moves"


def _loop_note(c: HloCollective) -> str:
    return ("in a loop whose trip count the text does not give: counted once"
            if c.repeats is None else "")


@short_errors()
def time_permute(topology: Topology, pairs, nbytes: int, *, model: str | None = None) -> PermuteTiming:
    """One collective-permute: ``nbytes`` from each source rank to its target, all at once."""
    from ..analysis import time_flows
    from ..bounds import Bound
    used = default_model(topology) if model is None else str(model).strip().lower()
    src = np.array([s for s, _ in pairs], dtype=np.int64)
    dst = np.array([t for _, t in pairs], dtype=np.int64)
    links = topology.links
    out_bw = np.bincount(links.src, weights=links.bandwidth, minlength=topology.num_vertices)
    in_bw = np.bincount(links.dst, weights=links.bandwidth, minlength=topology.num_vertices)
    sent = np.bincount(src, minlength=topology.num_vertices) * float(nbytes)
    got = np.bincount(dst, minlength=topology.num_vertices) * float(nbytes)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_out = np.where(out_bw > 0, sent / out_bw, 0.0)
        t_in = np.where(in_bw > 0, got / in_bw, 0.0)
    busiest = max(float(t_out.max()), float(t_in.max()))
    r = topology.routes(src, dst)
    per_sub = np.bincount(r.inc_sub, weights=links.latency[r.inc_link], minlength=len(r.sub_flow))
    lat = np.zeros(len(src))
    np.maximum.at(lat, r.sub_flow, per_sub)
    latency = float(lat.max(initial=0.0))
    worst = int(np.argmax(np.maximum(t_out[src], t_in[dst])))
    bound = Bound(max(busiest, latency), busiest,
                  f"rank {int(src[worst])} must send the buffer over its links", latency,
                  "the longest route's latency")
    crosses = _crossing(topology, int(src[worst]), int(dst[worst]))
    if used == "nccl":
        from .. import nccl
        comm = nccl.comm_for(topology)
        node = getattr(topology, "gpus_per_node", topology.num_ranks)
        times = [nccl.p2p.send(nbytes, comm, same_node=s // node == t // node).time
                 for s, t in pairs]
        return PermuteTiming("nccl", max(times), bound, len(pairs), crosses)
    res = time_flows(topology, [(int(s), int(t), nbytes) for s, t in pairs])
    return PermuteTiming("ideal", float(res.time), bound, len(pairs), crosses, res)


def permute_schedule(topology: Topology, pairs):
    """A collective-permute as a schedule the library replays and checks: the direct
    all-to-all whose traffic matrix holds one block from each source to its target
    and nothing else (so :func:`collectives_lib.check` proves every target ends with
    its source's block, and the drawings show it). Simulated at a size of
    ``len(pairs) * nbytes / num_ranks`` (the whole array of that all-to-all is the
    blocks moved) it takes what :func:`time_permute` says; this schedule lists
    ``num_ranks**2`` transfers, so it is for looking at, up to 4,096 ranks."""
    from ..plan import build
    n = topology.num_ranks
    if n > 4096:
        raise CollectivesError(f"a permute's schedule lists num_ranks^2 transfers; {n} ranks "
                               f"are too many to draw or check (time it with time_permute)")
    matrix = np.zeros((n, n))
    for s, t in pairs:
        if not (0 <= int(s) < n and 0 <= int(t) < n) or s == t:
            raise CollectivesError(f"pair ({s}, {t}) is not two distinct ranks of {topology!r}")
        matrix[int(s), int(t)] += 1.0
    return build("all_to_all", topology, "direct", matrix=matrix)


def _crossing(topology: Topology, s: int, t: int) -> str:
    route = topology.route(s, t)
    classes = sorted({topology.links.class_name(link) for link in route})
    return f"rank {s} -> rank {t}: {len(route)} link{'s' if len(route) != 1 else ''} ({', '.join(classes)})"
