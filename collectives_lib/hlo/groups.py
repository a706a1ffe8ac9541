"""Replica groups in XLA's three spellings, and source-target pairs.

* explicit: ``{{0,1},{2,3}}`` (``{}``: every participant in one group);
* iota: ``[2,4]<=[8]`` (2 groups of 4 from ``arange(8)``), ``[4,2]<=[2,4]T(1,0)``
  (reshaped to 2x4, transposed, cut into 4 groups of 2);
* mesh axes (Shardy): ``mesh['x'=4,'y'=2] {'x'}``, optionally with
  ``device_ids=(...)`` after the mesh and sub-axes ``'x':(1)2``.

Sizes are checked before any array is made: a group list naming more than
:data:`MAX_DEVICES` devices, or a dimension of 0, is refused in one line.
"""

from __future__ import annotations

import re

import numpy as np

from .text import Bad, clip, ints, match, number, split_top

#: The most devices a module's groups may name (2**20, far above any machine built).
MAX_DEVICES = 1 << 20

_IOTA = re.compile(r"\[(\d+(?:,\d+)*)\]<=\[(\d+(?:,\d+)*)\](?:T\((\d+(?:,\d+)*)\))?")
_PAIR = re.compile(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}")
_GROUP = re.compile(r"\{\s*(\d+(?:\s*,\s*\d+)*)\s*\}")


def _sizes(values: list[int], what: str) -> int:
    """The product of ``values``, refused when a value is 0 or the product is too large."""
    if any(v == 0 for v in values):
        raise Bad(f"{what}: a dimension of 0 devices")
    total = 1
    for v in values:
        total *= v
        if total > MAX_DEVICES:
            raise Bad(f"{what} names more than {MAX_DEVICES:,} devices")
    return total


def iota(dims: list[int], reshape: list[int], perm: list[int] | None, what: str) -> np.ndarray:
    """XLA's iota device list: ``arange`` of ``reshape``'s size, reshaped, transposed, as ``dims``."""
    n = _sizes(reshape, what)
    if _sizes(dims, what) != n:
        raise Bad(f"{what}: {'x'.join(map(str, dims))} is not {n} devices")
    ids = np.arange(n).reshape(reshape)
    if perm is not None:
        if sorted(perm) != list(range(len(reshape))):
            raise Bad(f"{what}: T({','.join(map(str, perm))}) is not a permutation "
                      f"of {len(reshape)} dimensions")
        ids = ids.transpose(perm)
    return ids.reshape(dims)


def _mesh_axes(value: str, end: int, what: str) -> tuple[list[str], list[int]]:
    axes = []
    for part in split_top(value[5:end - 1]):
        m = re.fullmatch(r"'?([^'=]+)'?\s*=\s*(\d+)", part)
        if not m:
            raise Bad(f"{what}: mesh axis {part!r} is not name=size")
        axes.append((m.group(1), number(m.group(2), f"{what}: mesh axis size")))
    names = [a for a, _ in axes]
    sizes = [s for _, s in axes]
    twice = next((a for i, a in enumerate(names) if a in names[:i]), None)
    if twice is not None:
        raise Bad(f"{what}: the mesh names axis {clip(twice, 40)!r} twice")
    _sizes(sizes, what)
    return names, sizes


def _device_ids(rest: str, n: int, what: str) -> tuple[np.ndarray, str]:
    ids = np.arange(n)
    if rest.startswith(","):
        rest = rest[1:].strip()
        if not rest.startswith("device_ids=("):
            raise Bad(f"{what}: expected device_ids=(...) after the mesh")
        start = len("device_ids=")
        close = match(rest, start)
        inner = rest[start + 1:close - 1].strip()
        rest = rest[close:].strip()
        form = re.fullmatch(r"\[(\d+(?:,\d+)*)\](?:T\((\d+(?:,\d+)*)\))?", inner)
        if form:
            ids = iota([n], ints(form.group(1)), ints(form.group(2)) if form.group(2) else None, what)
        elif re.fullmatch(r"\d+(?:\s*,\s*\d+)*", inner):
            ids = np.array(ints(inner))
        else:
            raise Bad(f"{what}: device_ids ({clip(inner)}) is not a list of device ids")
        if len(ids) != n or sorted(ids.tolist()) != list(range(n)):
            raise Bad(f"{what}: device_ids are not a permutation of 0..{n - 1}")
    return ids, rest


def mesh_groups(value: str) -> np.ndarray:
    """Groups of ``mesh['a'=4,'b'=2](, device_ids=(...))? {'a', 'b':(1)2}``.

    XLA's rule: reshape the device array so that every referenced sub-axis is a
    dimension of its own, move the referenced dimensions last (in mesh order;
    sub-axes of one mesh axis in the order listed) and cut into groups.
    """
    what = f"replica_groups {clip(value)!r}"
    if not value.startswith("mesh["):
        raise Bad(f"{what} is not understood")
    end = match(value, 4)
    names, sizes = _mesh_axes(value, end, what)
    n = int(np.prod(sizes))
    ids, rest = _device_ids(value[end:].strip(), n, what)
    if not (rest.startswith("{") and rest.endswith("}")):
        raise Bad(f"{what}: expected the grouped axes in braces after the mesh")
    refs: dict[int, list[tuple[int, int | None, int | None]]] = {}
    for order, part in enumerate(split_top(rest[1:-1])):
        m = re.fullmatch(r"'?([^':]+)'?(?::\((\d+)\)(\d+))?", part)
        if not m or m.group(1) not in names:
            raise Bad(f"{what}: {part} is not an axis of the mesh ({', '.join(names)})")
        i = names.index(m.group(1))
        pre = number(m.group(2), what) if m.group(2) else None
        size = number(m.group(3), what) if m.group(3) else None
        if pre is None and any(p is None for _, p, _ in refs.get(i, ())):
            raise Bad(f"{what}: axis {names[i]} is listed twice in the groups")
        if pre is not None and (pre < 1 or size < 2 or sizes[i] % (pre * size)):
            raise Bad(f"{what}: sub-axis {part} does not divide axis {names[i]} "
                      f"of size {sizes[i]}")
        refs.setdefault(i, []).append((order, pre, size))
    if not refs:
        raise Bad(f"{what} groups no axis")
    dims, grouped = _split_dims(sizes, names, refs, what)
    others = [d for d in range(len(dims)) if d not in grouped]
    size = int(np.prod([dims[d] for d in grouped]))
    return ids.reshape(dims).transpose(others + grouped).reshape(-1, size)


def _split_dims(sizes, names, refs, what) -> tuple[list[int], list[int]]:
    """The device array's dimensions with every referenced sub-axis its own, and
    which of them are grouped (in the order the groups list them)."""
    dims: list[int] = []
    grouped: list[int] = []
    for i, full in enumerate(sizes):
        mine = refs.get(i)
        offset = len(dims)
        if not mine:
            dims.append(full)
            continue
        if len(mine) == 1 and mine[0][1] is None:
            dims.append(full)
            grouped.append(offset)
            continue
        if any(pre is None for _, pre, _ in mine):
            raise Bad(f"{what}: axis {names[i]} is grouped both whole and in parts")
        position: dict[int, int] = {}
        prefix = 1
        for order, pre, size in sorted(mine, key=lambda r: r[1]):
            if pre % prefix:
                raise Bad(f"{what}: sub-axes of {names[i]} overlap")
            if pre != prefix:
                dims.append(pre // prefix)
                prefix = pre
            position[order] = len(dims) - offset
            dims.append(size)
            prefix *= size
        if full % prefix:
            raise Bad(f"{what}: sub-axes of {names[i]} do not divide its size {full}")
        if prefix != full:
            dims.append(full // prefix)
        grouped.extend(offset + position[order] for order, _, _ in mine)
    return dims, grouped


def groups(value: str, participants: int) -> np.ndarray:
    """The groups ``replica_groups=value`` writes, as an array (one row per group)."""
    value = value.strip()
    if value.startswith("{"):
        inner = value[1:-1].strip() if value.endswith("}") else None
        if inner == "":
            return np.arange(participants)[None, :]
        rows = _explicit(inner) if inner is not None else None
        if rows is None and inner is not None:
            rows = []
            for part in split_top(inner):
                m = _GROUP.fullmatch(part)
                if not m:
                    rows = None
                    break
                rows.append(_ids(m.group(1), value))
        if not rows:
            raise Bad(f"replica_groups {clip(value)!r} is not a list of groups like "
                      "{{0,1},{2,3}}")
        if len({len(g) for g in rows}) > 1:
            raise Bad(f"replica_groups {clip(value)!r} has groups of different sizes")
        top = max(max(g) for g in rows)
        if top >= MAX_DEVICES:
            raise Bad(f"replica_groups {clip(value)!r} names device {clip(str(top), 24)}, beyond "
                      f"{MAX_DEVICES:,}")
        return np.array(rows, dtype=np.int64)
    m = _IOTA.fullmatch(value)
    if m:
        dims = ints(m.group(1))
        if len(dims) != 2:
            raise Bad(f"replica_groups {clip(value)!r} must be [groups,size]<=[...]")
        return iota(dims, ints(m.group(2)), ints(m.group(3)) if m.group(3) else None,
                    f"replica_groups {clip(value)!r}")
    if value.startswith("mesh["):
        return mesh_groups(value)
    raise Bad(f"replica_groups {clip(value)!r} is not understood: expected "
              "{{0,1},{2,3}}, [2,4]<=[8] or mesh['x'=4] {'x'}")


_PLAIN = re.compile(r"[\d,\s{}]*")
_BETWEEN = re.compile(r"\}\s*,\s*\{")


def _explicit(inner: str) -> list[list[int]] | None:
    """``{0,1},{2,3}`` as rows of ids, read in C where it can be (a group of a million
    devices is 7 MB of text); None when it is not that plain (then read part by part,
    which says what is wrong)."""
    if not (inner.startswith("{") and inner.endswith("}")):
        return None
    if not _PLAIN.fullmatch(inner):
        return None
    rows = []
    for part in _BETWEEN.split(inner[1:-1]):
        if "{" in part or "}" in part:
            return None
        try:
            rows.append(list(map(int, part.split(","))))
        except ValueError:                     # an empty id, or one of 4,300 digits
            return None
    return rows


def _ids(text: str, value: str) -> list[int]:
    if any(len(v.strip()) > 19 for v in text.split(",")):
        raise Bad(f"replica_groups {clip(value)!r} names a device beyond "
                  f"{MAX_DEVICES:,}")
    return ints(text)


def pairs(value: str) -> list[tuple[int, int]]:
    """``source_target_pairs={{0,1},{1,0}}`` as a list of pairs."""
    found = _PAIR.findall(value)
    if not found or _PAIR.sub("", value).strip(" ,{}\t"):
        raise Bad(f"source_target_pairs {clip(value)!r} is not a list like {{{{0,1}},{{1,0}}}}")
    out = [(number(s, "source_target_pairs id"), number(t, "source_target_pairs id"))
           for s, t in found]
    if max(max(p) for p in out) >= MAX_DEVICES:      # (Python ints: no overflow)
        raise Bad(f"source_target_pairs {clip(value)!r} name a device beyond {MAX_DEVICES:,}")
    return out


def expand_groups(rows: np.ndarray, mode: str, P: int, R: int):
    """Groups as written -> groups of global device ids (replica * P + partition)."""
    if mode == "global":
        yield from (tuple(g) for g in rows.tolist())
    elif mode == "replica":
        for p in range(P):
            yield from (tuple(r * P + p for r in g) for g in rows.tolist())
    elif mode == "partition":
        for r in range(R):
            yield from (tuple(r * P + p for p in g) for g in rows.tolist())
    else:  # replica_and_partition: the replicas listed, with all their partitions
        yield from (tuple(r * P + p for r in g for p in range(P)) for g in rows.tolist())


def expand_pairs(found, mode: str, P: int, R: int):
    if mode == "partition":
        for r in range(R):
            yield from ((r * P + s, r * P + t) for s, t in found)
    else:
        for p in range(P):
            yield from ((s * P + p, t * P + p) for s, t in found)


def format_groups(groups, limit: int = 8, width: int = 40) -> str:
    """Groups as HLO writes them, cut short for a message: at most ``limit`` groups
    and about ``width`` characters, a long group to its first ids and a count.

    >>> format_groups([[0, 1], [2, 3]])
    '{{0,1},{2,3}}'
    >>> format_groups([list(range(1024)), list(range(1024, 2048))])
    '{{0,1,2,3,... 1,020 more},... 1 more}'
    >>> format_groups([[i] for i in range(100)])
    '{{0},{1},{2},{3},{4},{5},{6},{7},... 92 more}'
    """
    groups = groups if hasattr(groups, "__len__") else list(groups)
    parts: list[str] = []
    used = 2
    for g in groups:
        if len(parts) >= limit or used >= width:
            break
        shown = limit if len(g) <= limit else limit // 2
        ids = [str(v) for _, v in zip(range(shown), g)]
        room = max(8, width - used)
        while len(ids) > 1 and sum(map(len, ids)) + len(ids) > room:
            ids.pop()
        part = "{" + ",".join(ids)
        if len(g) > len(ids):
            part += f",... {len(g) - len(ids):,} more"
            used = width                       # (after a group cut short, no other)
        parts.append(part + "}")
        used += len(parts[-1]) + 1
    if len(groups) > len(parts):
        parts.append(f"... {len(groups) - len(parts):,} more")
    return "{" + ",".join(parts) + "}"
