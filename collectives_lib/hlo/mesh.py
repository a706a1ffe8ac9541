"""A program's mesh, and which of its axes (or sub-axes) a collective's groups span.

The ids in HLO groups are positions in the mesh (partition ids: row-major, the
last axis fastest, as ``np.arange(8).reshape(4, 2)``), whatever physical
devices the mesh holds. A group may span a *sub-axis*: a mesh axis of 4 split
into a major and a minor half, written as JAX and Shardy write it,
``"x:(1)2"`` (the major 2) and ``"x:(2)2"`` (the minor 2).
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Mapping

import numpy as np

from ..errors import CollectivesError
from .groups import format_groups
from .text import clip, short_errors
from .records import HloCollective

#: Sub-axes searched at most (beyond, a group that is no whole axis is refused).
MAX_SUB_AXES = 12


def parse_mesh(text: str) -> dict[str, int]:
    """``"x=4,y=2"`` -> ``{"x": 4, "y": 2}``, the way a command line writes a mesh.

    >>> parse_mesh("x=4, y=2")
    {'x': 4, 'y': 2}
    """
    out: dict[str, int] = {}
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*(\d{1,7})\s*", part)
        if not m or int(m.group(2)) < 1 or m.group(1) in out:
            raise CollectivesError(
                f"mesh {str(text)[:60]!r} is not understood; write axis=size pairs like x=4,y=2")
        out[m.group(1)] = int(m.group(2))
    return out


def resolve_mesh(mesh, devices=None) -> tuple[list[str], np.ndarray, str]:
    """(axis names, device-id array shaped like the mesh, description)."""
    if isinstance(mesh, str):
        mesh = parse_mesh(mesh)
    if hasattr(mesh, "axis_names") and hasattr(mesh, "devices") and not isinstance(mesh, Mapping):
        # A jax.sharding.Mesh, read without importing jax: only its shape matters here
        mesh = dict(zip((str(a) for a in mesh.axis_names), np.shape(mesh.devices)))
    if not isinstance(mesh, Mapping) or not mesh:
        raise CollectivesError(
            f"mesh must map axis names to sizes, like {{'x': 4, 'y': 2}} or 'x=4,y=2'; "
            f"got {clip(repr(mesh))}")
    names = [str(a) for a in mesh]
    sizes = []
    for a, s in mesh.items():
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise CollectivesError(f"mesh axis {clip(repr(a), 40)} must have a whole "
                                   f"size >= 1, got {clip(repr(s), 40)}")
        sizes.append(int(s))
    desc = ",".join(f"{a}={s}" for a, s in zip(names, sizes))
    n = int(np.prod(sizes, dtype=object))
    if n > 1 << 20:
        raise CollectivesError(f"mesh {desc} has {n} devices; at most {1 << 20:,} are read")
    if devices is None:
        return names, np.arange(n).reshape(sizes), desc
    ids = np.asarray(devices)
    if ids.shape != tuple(sizes):
        raise CollectivesError(f"devices has shape {ids.shape} but mesh {desc} needs {tuple(sizes)}")
    if not np.issubdtype(ids.dtype, np.integer) or sorted(ids.ravel().tolist()) != list(range(n)):
        raise CollectivesError(
            f"devices must hold each device id 0..{n - 1} once, got {ids.ravel().tolist()[:16]}")
    ids = ids.astype(np.int64)
    if not np.array_equal(ids.ravel(), np.arange(n)):
        desc += f" (devices {clip(str(ids.tolist()), 40)})"
    return names, ids, desc


def mesh_sizes(mesh) -> dict[str, int]:
    """``mesh`` (``"x=4,y=2"``, a dict or a ``jax.sharding.Mesh``) as ``{axis: size}``.

    >>> mesh_sizes("x=4,y=2")
    {'x': 4, 'y': 2}
    """
    names, ids, _ = resolve_mesh(mesh, None)
    return dict(zip(names, (int(s) for s in ids.shape)))


@short_errors()
def mesh_axes(groups, mesh, *, devices=None) -> tuple[str, ...]:
    """Which axes of ``mesh`` the replica groups span.

    ``groups`` is a :class:`HloCollective` or a list of groups of device ids.
    ``mesh`` maps axis names to sizes in order (``{"x": 4, "y": 2}``,
    ``"x=4,y=2"`` or a ``jax.sharding.Mesh``); ``devices`` gives another
    numbering of the positions, as an array shaped like the mesh. The axes come
    in the order the groups list their devices (``("y", "x")`` when a group runs
    along y first), and ``()`` for groups of one device. Groups that span part
    of an axis name a sub-axis (``"x:(1)2"``, the major half of an axis of 4).
    A permute spans the axes along which its pairs move data.

    >>> mesh = {"x": 4, "y": 2}
    >>> mesh_axes([[0, 1], [2, 3], [4, 5], [6, 7]], mesh)
    ('y',)
    >>> mesh_axes([[0, 2, 4, 6], [1, 3, 5, 7]], mesh)
    ('x',)
    >>> mesh_axes([list(range(8))], mesh)
    ('x', 'y')
    >>> mesh_axes([[0, 4], [1, 5], [2, 6], [3, 7]], mesh)
    ('x:(1)2',)
    >>> mesh_axes([[0, 3], [1, 2]], {"x": 2, "y": 2})
    Traceback (most recent call last):
    ...
    collectives_lib.errors.CollectivesError: replica groups {{0,3},{1,2}} do not span any set of axes or sub-axes of mesh x=2,y=2
    """
    names, ids, desc = resolve_mesh(mesh, devices)
    n = ids.size
    if isinstance(groups, HloCollective):
        if groups.num_devices != n:
            raise CollectivesError(
                f"mesh {desc} has {n} devices but {groups.name} runs on a module of "
                f"{groups.num_devices}")
        if groups.kind == "collective_permute":
            return _permute_axes(groups.source_target_pairs, names, ids, desc)
        groups = groups.replica_groups
    try:
        key = tuple(tuple(int(v) for v in g) for g in groups)
    except (TypeError, ValueError):
        raise CollectivesError(f"replica groups must be lists of device ids, got "
                               f"{clip(repr(groups))}") from None
    return _axes(key, tuple(names), tuple(ids.shape), ids.tobytes(), desc)


@functools.lru_cache(maxsize=2048)
def _axes(groups, names, shape, ids_bytes, desc) -> tuple[str, ...]:
    ids = np.frombuffer(ids_bytes, dtype=np.int64).reshape(shape)
    n = ids.size
    if not groups or not all(groups):
        raise CollectivesError(f"replica groups must be non-empty lists of device ids, got "
                               f"{format_groups(groups)}")
    text = format_groups(groups)
    covered = sorted(v for g in groups for v in g)
    if len(set(covered)) != len(covered):
        raise CollectivesError(f"replica groups {text} list a device twice")
    if len(covered) != n:
        raise CollectivesError(
            f"mesh {desc} has {n} devices but the replica groups {text} cover {len(covered)}")
    if covered != list(range(n)):
        raise CollectivesError(
            f"replica groups {text} name devices outside 0..{n - 1} of mesh {desc}")
    if all(len(g) == 1 for g in groups):
        return ()
    found = _search(groups, list(names), ids)
    if found is not None:
        return found
    fine_names, fine = _sub_axes(list(names), ids)
    if len(fine_names) <= MAX_SUB_AXES:
        found = _search(groups, fine_names, fine)
        if found is not None:
            return _merge(found, dict(zip(names, shape)))
    raise CollectivesError(
        f"replica groups {text} do not span any set of axes or sub-axes of mesh {desc}")


def _search(groups, names: list[str], ids: np.ndarray) -> tuple[str, ...] | None:
    size = len(groups[0])
    want = {frozenset(g) for g in groups}
    exact = sorted(groups)
    for k in range(1, len(names) + 1):
        for subset in itertools.combinations(range(len(names)), k):
            if int(np.prod([ids.shape[a] for a in subset])) != size:
                continue
            if _axis_groups(ids, subset, set_form=True) != want:
                continue
            for order in itertools.permutations(subset):
                if sorted(map(tuple, _axis_groups(ids, order).tolist())) == exact:
                    return tuple(names[a] for a in order)
            return tuple(names[a] for a in subset)
    return None


def _primes(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def _sub_axes(names: list[str], ids: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The mesh with every axis split into its prime factors, major first, named as
    sub-axes ``"x:(pre)size"``."""
    fine_names, fine_shape = [], []
    for name, size in zip(names, ids.shape):
        pre = 1
        for p in _primes(int(size)) or [1]:
            fine_names.append(f"{name}:({pre}){p}" if p != size else name)
            fine_shape.append(p)
            pre *= p
    return fine_names, ids.reshape(fine_shape)


def _merge(found: tuple[str, ...], sizes: dict[str, int]) -> tuple[str, ...]:
    """Adjacent sub-axes of one axis, major then minor, written as one."""
    out: list[tuple[str, int, int]] = []          # (axis, pre, size)
    for part in found:
        m = re.fullmatch(r"(.*):\((\d+)\)(\d+)", part)
        axis, pre, size = (m.group(1), int(m.group(2)), int(m.group(3))) if m else (part, 1, sizes[part])
        if out and out[-1][0] == axis and out[-1][1] * out[-1][2] == pre:
            out[-1] = (axis, out[-1][1], out[-1][2] * size)
        else:
            out.append((axis, pre, size))
    return tuple(a if (pre, size) == (1, sizes[a]) else f"{a}:({pre}){size}" for a, pre, size in out)


def _axis_groups(ids: np.ndarray, axes, set_form: bool = False):
    others = [a for a in range(ids.ndim) if a not in axes]
    size = int(np.prod([ids.shape[a] for a in axes]))
    groups = ids.transpose(others + list(axes)).reshape(-1, size)
    if set_form:
        return {frozenset(g) for g in groups.tolist()}
    return groups


def _permute_axes(pairs, names, ids, desc) -> tuple[str, ...]:
    coords = np.stack(np.unravel_index(np.argsort(ids.ravel()), ids.shape), axis=1)
    moved = set()
    for s, t in pairs:
        if not (0 <= s < ids.size and 0 <= t < ids.size):
            raise CollectivesError(
                f"source_target_pairs name device {s if not 0 <= s < ids.size else t}, "
                f"outside mesh {desc}")
        moved |= {a for a in range(len(names)) if coords[s][a] != coords[t][a]}
    return tuple(names[a] for a in sorted(moved))
