"""Reading a module's text from a file or a stream, with a size limit.

A dump is read in chunks of 1 MiB into one buffer and refused, in one line, as
soon as it passes :data:`MAX_BYTES` (so ``/dev/zero`` or an endless pipe costs
at most that much memory; a regular file larger than that is refused from its
size, after its first 64 KiB), when its first 64 KiB hold no ``HloModule`` line
(a large file that is not HLO costs one chunk), or when it is not UTF-8 text.
"""

from __future__ import annotations

import io
import os
import stat
import sys

from ..errors import CollectivesError

#: The largest module text read (128 MiB; XLA's dumps of large models are tens of MB).
MAX_BYTES = 128 * 2**20
#: How far into a text its ``HloModule`` line must appear.
HEAD_BYTES = 64 * 2**10
_CHUNK = 2**20


def read_hlo(path: str, *, limit: int = MAX_BYTES) -> str:
    """The text of the dump at ``path`` (``"-"``: standard input), read in bounded chunks."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)
        return _read(stream, "standard input", limit)
    try:
        with open(path, "rb") as f:
            return _read(f, path, limit)
    except OSError as exc:
        raise CollectivesError(f"cannot read {path}: {exc.strerror or exc}") from None


def _size(stream) -> int | None:
    """The size of a regular file (None for a pipe, a device or a text stream)."""
    try:
        st = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _read(stream, what: str, limit: int) -> str:
    # one growing buffer and one decode: the peak is the bytes and the text once each;
    # a regular file larger than the limit is refused before it is read (after its head)
    size = _size(stream)
    data = bytearray()
    head = b""
    while True:
        chunk = stream.read(HEAD_BYTES if size is not None and size > limit else _CHUNK)
        if not chunk:
            break
        if isinstance(chunk, str):            # a text stream (a notebook's, a test's)
            chunk = chunk.encode("utf-8", errors="surrogateescape")
        if len(head) < HEAD_BYTES:
            head += chunk[:HEAD_BYTES - len(head)]
            if len(head) >= HEAD_BYTES and b"HloModule " not in head:
                raise CollectivesError(f"{what} is not HLO text: no 'HloModule' line "
                                       f"in its first {HEAD_BYTES // 2**10} KiB")
        if len(data) + len(chunk) > limit or size is not None and size > limit:
            raise CollectivesError(f"{what} is larger than {limit // 2**20} MiB, the "
                                   f"most an HLO module may be here: pass one module's "
                                   f"dump")
        data += chunk
    if b"\x00" in head:
        raise CollectivesError(f"{what} is not text (it holds NUL bytes): not an HLO dump")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CollectivesError(f"{what} is not text (not UTF-8): not an HLO dump") from None


def tpu_example(name: str) -> tuple[str, dict]:
    """``(text, meta)`` of a module compiled by the TPU compiler that the package ships
    (``"fsdp_layer"``: the chapter's FSDP layer on a v5e 2x4 slice; ``"collective_matmul"``:
    an all-gather matmul by ``ppermute`` on a v5e 4x4 slice). ``meta`` holds the
    topology, the mesh, each mesh position's chip coordinates and the versions of
    jax, jaxlib and libtpu that compiled it (tests/data/hlo_tpu/ has them all)."""
    import json
    from importlib import resources
    folder = resources.files("collectives_lib") / "data" / "hlo_tpu"
    names = sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))
    if name not in names:
        raise CollectivesError(f"no TPU example {name!r}; the package has {', '.join(names)}")
    return ((folder / f"{name}.txt").read_text(),
            json.loads((folder / f"{name}.meta.json").read_text()))
