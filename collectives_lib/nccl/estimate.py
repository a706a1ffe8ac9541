"""NCCL's model behind one entry: what NCCL runs for a collective, and what a run measures.

:func:`estimate` is the whole of NCCL's model as the rest of the library sees
it: one communicator (:func:`collectives_lib.nccl.comm_for`), every
(algorithm, protocol) NCCL would weigh at each size
(:func:`collectives_lib.nccl.predictions`), NCCL's pick (the least *tuner*
time, as ``src/enqueue.cc`` picks), and for the pick and every alternative
the time nccl-tests would measure (:func:`collectives_lib.nccl.measured_time`).
The choice, the reported times and the sorted alternatives all come from
these same numbers: NCCL chooses by its tuner's time, and the answer shows
both times.

>>> import collectives_lib as cl
>>> e = estimate("all_reduce", cl.nvswitch_node("dgx-h100"), [2**32])[0]
>>> e.algorithm, e.nccl_algorithm, e.protocol, cl.format_time(e.tuner_time), cl.format_time(e.time)
('nvls', 'NVLS', 'SIMPLE', '15.8 ms', '16.2 ms')

Introduced in the chapter *GPU collectives within the node*.
"""

from __future__ import annotations

from ..builders import algorithm_name, entries, group_for, nccl_names
from ..collective import Collective, collective as as_collective
from ..errors import CollectivesError
from ..estimates import Alternative, NcclEstimate
from ..timing import bound_kinds
from ..topology import Topology
from ..units import element_size
from .comm import comm_for, predictions, send_same_node, send_share
from . import symmetric as symk
from .measured import fill, measured_time, net_latency, parse_launch
from .tuner import FUNCTIONS, call_channels

_WHY_AUTO = "NCCL's tuner picks it: the least predicted time over its algorithms and protocols"
_WHY_P2P = ("NCCL runs it as grouped point-to-point sends: a cost per peer, NVLink inside the node, "
            "across nodes the GPU's share of its node's NICs")


def names_here(collective, topology: Topology, axes=None, *, nvls=None, dtype: str = "float32",
               protocol: str | None = None, size: int = 1 << 30) -> dict[str, str]:
    """The registry's name -> NCCL's, for what NCCL would run for ``collective`` here
    (at ``size``; the algorithms NCCL enables do not depend on the size)."""
    coll = as_collective(collective)
    comm = comm_for(topology, axes, dtype=dtype, nvls=nvls,
                    protocols=None if protocol is None else [protocol])
    to_registry = nccl_names(coll)
    out = {}
    for p in predictions(coll, size, comm):
        out.setdefault(to_registry.get(p.algorithm, p.algorithm.lower()), p.algorithm)
    return out


def estimate(collective, topology: Topology, sizes, algorithm: str = "auto", *, axes=None,
             protocol: str | None = None, dtype: str = "float32", nvls: bool | None = None,
             options=None, launch=None, registered: bool = False) -> list[NcclEstimate]:
    """NCCL's answer for ``collective`` at every size in ``sizes`` (nccl-tests' sizes).

    ``algorithm`` is ``auto`` (NCCL's tuner) or a registry name NCCL runs here
    (``ring``, ``tree``, ``nvls``, ...: ``NCCL_ALGO``); ``protocol`` fixes the
    protocol (``NCCL_PROTO``), ``nvls=False`` is ``NCCL_NVLS_ENABLE=0``.
    ``launch`` is how the GPUs are driven (``"process-per-gpu"``, the default, or
    ``"gpus-per-process=G"``, either with ``"+graph"``: :func:`~collectives_lib.nccl.measured.parse_launch`);
    ``registered=True`` is buffers registered as symmetric windows (nccl-tests
    ``-R 2``), which run NCCL's symmetric kernels where one applies
    (:mod:`collectives_lib.nccl.symmetric`).
    Each answer carries the lower bound for the kind of algorithm NCCL picks
    (reducing in the switches or not) and, for one that does not, the in-network
    bound apart.
    """
    coll = as_collective(collective)
    options = dict(options or {})
    group, groups = group_for(coll, topology, axes, options)          # roots checked here
    comm = comm_for(topology, axes, dtype=dtype, nvls=nvls,
                    protocols=None if protocol is None else [protocol])
    how = parse_launch(launch, comm.ppn)
    if not isinstance(registered, bool):
        raise CollectivesError(f"registered must be True or False, got {registered!r}")
    to_registry = nccl_names(coll)
    wanted = algorithm_name(algorithm)
    tuned = coll.value in FUNCTIONS
    if protocol is not None and not tuned:
        raise CollectivesError(
            f"protocol {protocol!r} cannot be set for {coll.value}: NCCL runs it as grouped "
            f"send/recv, whose protocol it picks by size (LL up to NCCL_P2P_LL_THRESHOLD, "
            f"16 KiB per channel, then Simple; enqueue.cc), not by NCCL_PROTO; leave it out")
    symmetric = registered and symk.applies(coll, comm)
    if registered and (wanted != "auto" or protocol is not None) and symmetric:
        raise CollectivesError("registered buffers run NCCL's symmetric kernels, which NCCL picks by "
                               "their own model: leave the algorithm auto and the protocol unset")
    if wanted != "auto":
        here = names_here(coll, topology, axes, nvls=nvls, dtype=dtype, protocol=protocol)
        if wanted not in here:
            _refuse(coll, topology, wanted, here, protocol, nvls)
    esize = element_size(dtype)
    kinds = bound_kinds(coll, topology, sizes, axes=axes, options=options, element_size=esize)
    notes = _notes(comm, how, registered, symmetric)
    send = coll is Collective.SEND
    same_node = send_same_node(topology, groups[0], group.options) if send else None
    share = send_share(topology, groups, group.options) if send and not same_node else 1.0
    if share < 1 - 1e-12:
        notes += (f"; the {len(groups)} groups' sends cross the same links at once: each keeps "
                  f"{share:.3g} of its route's rate")
    out = []
    for i, size in enumerate(sizes):
        if symmetric:
            out.append(_symmetric(coll, topology, int(size), comm, how, kinds, i, group, groups, dtype, notes))
            continue
        preds = predictions(coll, int(size), comm, same_node=same_node, share=share)
        if wanted != "auto":
            preds = [p for p in preds if to_registry.get(p.algorithm, p.algorithm.lower()) == wanted]
        if not preds:
            _refuse(coll, topology, wanted, {}, protocol, nvls)
        best = min(preds, key=lambda p: p.time)           # ties: NCCL's loop order, which min keeps
        time = measured_time(best, comm, how)
        alternatives = tuple(sorted(
            (Alternative(to_registry.get(p.algorithm, p.algorithm.lower()), measured_time(p, comm, how),
                         p.protocol if tuned else None, p.time) for p in preds if p is not best),
            key=lambda a: a.tuner_time))
        lat = min(best.latency + net_latency(comm), time)
        why = (_WHY_AUTO if wanted == "auto" else "as requested; NCCL's best protocol for it") if tuned else _WHY_P2P
        why += notes
        plain, apart = kinds[in_network(best.algorithm)]
        out.append(NcclEstimate(
            collective=coll, topology=topology, algorithm=to_registry.get(best.algorithm, best.algorithm.lower()),
            model="nccl", nbytes=int(size), dtype=dtype, time=time, latency_time=lat,
            bandwidth_time=time - lat, group_size=group.n, num_groups=len(groups), reason=why,
            bound=plain[i], network_bound=apart[i], note=_split_note(coll, int(size), group.n, dtype),
            alternatives=alternatives, protocol=best.protocol if tuned else None,
            nccl_algorithm=best.algorithm, tuner_time=best.time,
            channels=call_channels(best.algorithm, best.protocol, int(size), comm) if tuned
            else comm.channels))
    return out


def _notes(comm, how, registered: bool, symmetric: bool) -> str:
    """What the answer's reason adds: overridden link figures, the launch, registration."""
    out = []
    scaled = comm.scale.describe(comm.nodes > 1)
    if scaled:
        out.append(f"the topology's links differ from the preset's, so NCCL's per-link figures are "
                   f"the preset's scaled: {scaled}")
    if comm.oversubscription > 1:
        out.append(f"leaf uplinks at 1/{comm.oversubscription:g} of their NICs: NCCL's rings and trees "
                   f"cross one once per channel between Scalable Units, all-to-all sends its share "
                   f"for other Scalable Units through it")
    if how.gpus_per_process > 1:
        out.append(f"one process drives {how.gpus_per_process} GPUs ({how}): an iteration takes at "
                   f"least {how.gpus_per_process} launches of {how.floor() / how.gpus_per_process * 1e6:.1f} us")
    elif how.graph:
        out.append("iterations in a CUDA Graph")
    if registered and not symmetric:
        out.append("registered buffers, but no symmetric kernel applies here (it needs one NVLink "
                   "domain and, to reduce, a floating-point type other than double): NCCL's usual "
                   "algorithms run")
    return "".join("; " + x for x in out)


def _symmetric(coll, topology, size, comm, how, kinds, i, group, groups, dtype, notes) -> NcclEstimate:
    """The answer on registered buffers: NCCL's symmetric kernel and its own model's time,
    the pipeline fill of the algorithm it resembles, and the launch floor."""
    cands = symk.candidates(coll, size, comm)
    best = symk.pick(coll, size, comm)

    def timed(k):
        t_bw = max(k.time - _base(k), symk.link_floor(k.name, size, comm))
        t = _base(k) + t_bw + fill("NVLS" if k.multicast else "RING", t_bw, comm, k.protocol)
        return max(t, how.floor())
    time = timed(best)
    name = "nvls" if best.multicast else "direct"
    alternatives = tuple(sorted((Alternative("nvls" if k.multicast else "direct", timed(k), k.protocol, k.time)
                                 for k in cands if k is not best), key=lambda a: a.tuner_time))
    plain, apart = kinds[best.in_network]
    lat = min(_base(best), time)
    return NcclEstimate(
        collective=coll, topology=topology, algorithm=name, model="nccl", nbytes=size, dtype=dtype,
        time=time, latency_time=lat, bandwidth_time=time - lat, group_size=group.n,
        num_groups=len(groups),
        reason=("registered buffers (symmetric windows): NCCL runs its symmetric kernel "
                f"{best.name}, the least time by the kernels' own model" + notes),
        bound=plain[i], network_bound=apart[i], note=_split_note(coll, size, group.n, dtype),
        alternatives=alternatives, protocol=best.protocol, nccl_algorithm=best.name,
        tuner_time=best.time, channels=best.blocks)


def _base(k) -> float:
    """A symmetric kernel's fixed cost (s): its model's base latency."""
    return min(k.base, k.time)


def in_network(nccl_algorithm: str) -> bool:
    """Whether NCCL's algorithm reduces in the switches (NVLS, NVLS_TREE, CollNet)."""
    return nccl_algorithm in ("NVLS", "NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN")


def _split_note(coll, nbytes: int, n: int, dtype: str) -> str:
    """What nccl-tests does with a size that is not whole elements per rank: it runs
    ``count = size / element`` elements (rounded down), split over the ranks."""
    esize = element_size(dtype)
    pieces = coll.pieces(n)
    if nbytes % esize:
        left = nbytes % esize
        return (f"{left} {'byte does' if left == 1 else 'bytes do'} not make a whole {esize}-byte "
                f"element and {'is' if left == 1 else 'are'} left out (nccl-tests counts whole elements)")
    elements = nbytes // esize * (n if coll.layout == "pairs" else 1)
    if elements % pieces:
        return (f"{elements:,} elements do not split evenly over {pieces:,} ranks' pieces "
                f"(NCCL spreads the remainder)")
    return ""


def _refuse(coll, topology, wanted, here, protocol, nvls) -> None:
    known = entries(coll)
    if wanted != "auto" and wanted not in known:
        raise CollectivesError(f"unknown algorithm {wanted!r} for {coll}; NCCL's model knows "
                               f"{', '.join(sorted(here)) or 'none here'} (and auto); the "
                               f"ideal model knows {', '.join(known)}")
    if here:
        raise CollectivesError(
            f"NCCL does not run {wanted} for {coll} here; its algorithms here are "
            f"{', '.join(sorted(here))} (or use model='ideal' to time {wanted} on the links)")
    raise CollectivesError(
        f"NCCL has no {'protocol ' + protocol + ' for ' if protocol else ''}"
        f"{wanted if wanted != 'auto' else 'algorithm'} for {coll} on {topology!r}"
        + (" (NVLS is off)" if nvls is False else ""))
