"""Schedules as plain values and arrays: to ship to the MPI processes, or to save to a file.

:func:`save_schedule` writes a numpy ``.npz`` archive (arrays and one JSON header,
no pickles) that ``collectives run --schedule PATH`` runs; :func:`validate` says
whether a schedule can be executed as messages at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import CollectivesError
from ..schedule import COPY, REDUCE, Schedule, Step, Traffic

#: MPI's collective that each of the library's collectives is compared with.
MPI_NAMES = {
    "all_gather": "MPI_Allgather",
    "reduce_scatter": "MPI_Reduce_scatter_block",
    "all_reduce": "MPI_Allreduce",
    "all_to_all": "MPI_Alltoall",
    "broadcast": "MPI_Bcast",
    "reduce": "MPI_Reduce",
    "send": "MPI_Send/MPI_Recv",
    "gather": "MPI_Gather",
}


def schedule_to_dict(schedule: Schedule) -> dict:
    """Everything the ranks need to execute ``schedule``, as plain values and arrays.

    Lazily computed chunks are materialised; explicit paths, lanes and
    descriptions (which only matter for timing and drawing) are kept.
    """
    steps = []
    for step in schedule.steps:
        t = step.traffic
        steps.append({
            "src": np.asarray(t.src, dtype=np.int64), "dst": np.asarray(t.dst, dtype=np.int64),
            "op": np.asarray(t.op, dtype=np.uint8), "fraction": np.asarray(t.fraction, dtype=float),
            "path": None if t.path is None else np.asarray(t.path, dtype=np.int64),
            "lane": None if t.lane is None else np.asarray(t.lane, dtype=np.int64),
            "boxes": np.asarray(step.boxes, dtype=np.int64).reshape(len(t), len(schedule.slot_shape), 2),
            "stage": step.stage,
        })
    return {
        "collective": schedule.collective, "algorithm": schedule.algorithm,
        "num_ranks": int(schedule.num_ranks), "groups": np.asarray(schedule.groups, dtype=np.int64),
        "group_shape": tuple(int(v) for v in schedule.group_shape),
        "slot_shape": tuple(int(v) for v in schedule.slot_shape),
        "agents": tuple(schedule.agents), "routing": schedule.routing,
        "pipelined": bool(schedule.pipelined), "root": schedule.root, "dest": schedule.dest,
        "weights": None if schedule.weights is None else np.asarray(schedule.weights, dtype=float),
        "paths": tuple(tuple(int(v) for v in p) for p in schedule.paths),
        "description": schedule.description, "steps": steps,
    }


def schedule_from_dict(d: dict) -> Schedule:
    """Inverse of :func:`schedule_to_dict`."""
    steps = tuple(
        Step(Traffic(s["src"], s["dst"], s["op"], s["fraction"], s.get("path"), s.get("lane")),
             s["boxes"], s.get("stage", ""))
        for s in d["steps"])
    return Schedule(
        collective=d["collective"], algorithm=d["algorithm"], num_ranks=int(d["num_ranks"]),
        groups=np.asarray(d["groups"], dtype=np.int64), group_shape=tuple(d["group_shape"]),
        slot_shape=tuple(d["slot_shape"]), steps=steps, agents=tuple(d.get("agents", ())),
        routing=d.get("routing", "neighbor"), pipelined=bool(d.get("pipelined", False)),
        root=d.get("root"), dest=d.get("dest"), weights=d.get("weights"),
        paths=tuple(d.get("paths", ())), description=d.get("description", ""),
    )


def save_schedule(schedule: Schedule, path) -> Path:
    """Write ``schedule`` to ``path`` as a numpy ``.npz`` archive (arrays and one JSON
    header, no pickles), for ``python -m collectives_lib run --schedule PATH``."""
    path = Path(path)
    d = schedule_to_dict(schedule)
    arrays: dict[str, np.ndarray] = {"groups": d["groups"]}
    if d["weights"] is not None:
        arrays["weights"] = d["weights"]
    stages = []
    for k, st in enumerate(d["steps"]):
        stages.append(st["stage"])
        for key in ("src", "dst", "op", "fraction", "boxes", "path", "lane"):
            if st[key] is not None:
                arrays[f"step{k}.{key}"] = st[key]
    meta = {key: d[key] for key in ("collective", "algorithm", "num_ranks", "group_shape",
                                    "slot_shape", "agents", "routing", "pipelined", "root",
                                    "dest", "paths", "description")}
    meta["stages"] = stages
    arrays["header"] = np.array(json.dumps(meta))
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
    return path


def load_schedule(path) -> Schedule:
    """Read a schedule written by :func:`save_schedule`."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["header"]))
            d = dict(meta, groups=z["groups"], weights=z["weights"] if "weights" in z else None)
            d["steps"] = [
                {key: (z[f"step{k}.{key}"] if f"step{k}.{key}" in z else None)
                 for key in ("src", "dst", "op", "fraction", "boxes", "path", "lane")}
                | {"stage": stage}
                for k, stage in enumerate(meta["stages"])]
        return schedule_from_dict(d)
    except FileNotFoundError:
        raise CollectivesError(f"schedule file {str(path)!r} does not exist") from None
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same user error
        raise CollectivesError(
            f"schedule file {str(path)!r} is not a schedule written by "
            f"collectives_lib.mpi.save_schedule ({type(exc).__name__}: {exc})") from None


def validate(schedule: Schedule) -> None:
    """Raise :class:`CollectivesError` unless ``schedule`` can be executed as messages:
    participants in range, no transfer to itself, boxes inside the slot grid.

    Whether it computes its collective is *not* checked here: that is what the
    run finds out.
    """
    if schedule.collective not in MPI_NAMES:
        raise CollectivesError(f"collective {schedule.collective!r} cannot run over MPI here; "
                               f"supported: {', '.join(MPI_NAMES)}")
    P = schedule.num_participants
    grid = np.asarray(schedule.slot_shape, dtype=np.int64)
    for k, step in enumerate(schedule.steps):
        t = step.traffic
        bad = (t.src < 0) | (t.src >= P) | (t.dst < 0) | (t.dst >= P)
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            raise CollectivesError(
                f"step {k + 1}: transfer {int(t.src[i])} -> {int(t.dst[i])} names a participant "
                f"outside 0..{P - 1}")
        same = t.src == t.dst
        if same.any():
            i = int(np.nonzero(same)[0][0])
            raise CollectivesError(f"step {k + 1}: participant {int(t.src[i])} sends to itself")
        if not np.isin(t.op, (COPY, REDUCE)).all():
            raise CollectivesError(f"step {k + 1}: operation codes must be 0 (copy) or 1 (reduce)")
        boxes = step.boxes
        if len(t) and boxes.shape != (len(t), len(grid), 2):
            raise CollectivesError(
                f"step {k + 1}: chunks have shape {boxes.shape}, expected {(len(t), len(grid), 2)}")
        if len(t) and ((boxes[:, :, 0] < 0) | (boxes[:, :, 0] >= grid)
                       | (boxes[:, :, 1] < 1) | (boxes[:, :, 1] > grid)).any():
            raise CollectivesError(
                f"step {k + 1}: a chunk lies outside the slot grid {schedule.slot_shape}")
    if schedule.collective.rooted and schedule.root is None:
        raise CollectivesError(f"a {schedule.collective} schedule needs a root")
