"""Read which collectives an XLA program runs, from its HLO text.

A JAX program compiled for several devices runs collectives that XLA inserted
or that the program asked for (``jax.lax.psum``, ``all_gather``,
``psum_scatter``, ``all_to_all``, ``ppermute``). Their list, with the shapes,
the element types and the device groups, is in the compiled module's text::

    compiled = jax.jit(f).lower(*args).compile()
    module = parse_hlo(compiled.as_text())

The same reader takes the unoptimized text (``.lower(*args).as_text(dialect="hlo")``)
and XLA's dump files (``XLA_FLAGS=--xla_dump_to=DIR``, ``*after_optimizations.txt``).
It is plain text parsing: no JAX is imported, so a dump made on a TPU host can be
read anywhere.

Every collective is counted once, as it runs: an asynchronous pair
(``all-gather-start`` and ``all-gather-done``, or ``async-start``/``async-done``
around a wrapped collective) or a TPU async collective fusion chain is one
:class:`HloCollective`, named after its start; a TPU reduce-scatter fusion (an
all-reduce sliced inside a fusion) is one reduce-scatter; a loop's body counts
its trips (from the while's backend config, or from the loop's shape). Replica groups in
any of XLA's spellings (explicit ``{{0,1},{2,3}}``, iota ``[2,4]<=[8]``,
``[4,2]<=[2,4]T(1,0)``, or mesh axes ``mesh['x'=4,'y'=2] {'x'}``) are expanded
into explicit groups of device ids, and :func:`mesh_axes` says which axes of
your mesh they span.

>>> text = '''
... HloModule jit_f, num_partitions=8
...
... %add (a: f32[], b: f32[]) -> f32[] {
...   %a = f32[] parameter(0)
...   %b = f32[] parameter(1)
...   ROOT %sum = f32[] add(%a, %b)
... }
...
... ENTRY %main (p: f32[16,4]) -> (f32[32,4], f32[16,4]) {
...   %p = f32[16,4]{1,0} parameter(0)
...   %ag = f32[32,4]{1,0} all-gather(%p), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, dimensions={0}, use_global_device_ids=true
...   %ar = f32[16,4]{1,0} all-reduce(%p), channel_id=2, replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true, to_apply=%add
...   ROOT %t = (f32[32,4]{1,0}, f32[16,4]{1,0}) tuple(%ag, %ar)
... }
... '''
>>> module = parse_hlo(text)
>>> print(module)
HloModule jit_f: 2 collectives on 8 devices
name  kind        operands   result     groups  nbytes
ag    all_gather  f32[16,4]  f32[32,4]  4 x 2   512
ar    all_reduce  f32[16,4]  f32[16,4]  2 x 4   256
>>> ag, ar = module
>>> ag.dimension, ag.operand_bytes, ag.nbytes
(0, 256, 512)
>>> ar.replica_groups, ar.reduction
(((0, 2, 4, 6), (1, 3, 5, 7)), 'add')
>>> mesh_axes(ag, {"x": 4, "y": 2}), mesh_axes(ar, {"x": 4, "y": 2})
(('y',), ('x',))

The package, by concern: :mod:`.text` (brackets, shapes, instructions),
:mod:`.groups` (replica groups and pairs), :mod:`.loops` (trip counts),
:mod:`.ops` (opcodes and operand shapes), :mod:`.fold` (async chains and fusions
into what runs), :mod:`.parse`
(``parse_hlo``), :mod:`.mesh` (a program's mesh axes), :mod:`.timing`
(``time_hlo``: every collective timed on a topology), :mod:`.files`
(reading a dump with a size limit) and :mod:`.held` (the collector held while
the records are made). The limits on what one module may hold are
:mod:`.parse`'s ``MAX_*``; past one, it is refused in one line naming it.

Introduced in the chapter *From your code to the wire*.
"""

from __future__ import annotations

from .files import MAX_BYTES, read_hlo, tpu_example
from .groups import MAX_DEVICES, format_groups
from .mesh import mesh_axes, mesh_sizes, parse_mesh
from .parse import parse_hlo
from .records import KINDS, HloCollective, HloModule
from .text import ELEMENT_BITS, Array
from .timing import (HloRow, HloTiming, PermuteTiming, chip_ranks, library_dtype, time_hlo,
                     permute_schedule, time_permute, topology_axes)

__all__ = ["Array", "HloCollective", "HloModule", "ELEMENT_BITS", "KINDS", "parse_hlo",
           "parse_mesh", "mesh_axes", "mesh_sizes", "format_groups", "read_hlo", "MAX_BYTES",
           "MAX_DEVICES", "tpu_example", "time_hlo", "time_permute", "permute_schedule", "HloRow", "HloTiming", "PermuteTiming",
           "topology_axes", "library_dtype", "chip_ranks"]
