"""A diagnosis as text (nccl-tests' table with the model's columns beside it) and as JSON.

:class:`Diagnosis` is the value :func:`collectives_lib.diagnose` returns:
``str()`` is what ``collectives diagnose FILE`` prints, :meth:`Diagnosis.as_dict`
what ``--json`` prints (strict JSON: no NaN or infinity).

The table keeps nccl-tests' columns and their widths (out-of-place and
in-place time, algbw, busbw, ``#wrong``) and adds four: the time and busbw
NCCL's model expects, ``ratio`` (measured over expected time: above 1 the
run is slower) and the algorithm and protocol the model expects NCCL to run.

Introduced in the chapter *Running and reading NCCL*.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

from .. import nccl
from .findings import Comparison, Finding, Metrics
from .infer import Machine
from .parse import Output, Timing

WIDTH = 100


def _float(value: float, width: int) -> str:
    """nccl-tests' getFloatStr: 2 decimals, then fewer, then exponent, to fit ``width``."""
    for fmt in (f"{{:{width}.2f}}", f"{{:{width}.1f}}", f"{{:{width}.0f}}"):
        s = fmt.format(value)
        if len(s) <= width:
            return s
    return f"{{:{width}.1e}}".format(value) if width >= 7 else f"{{:{width}.0e}}".format(value)


def _half(t: Timing | None) -> str:
    """One half of a row as the output printed it (nccl-tests' widths: 7, 6, 6, 6)."""
    if t is None:
        return " " * 33
    if t.printed:
        p = list(t.printed) + [""] * (4 - len(t.printed))      # a row cut short keeps its gap
    else:
        p = [_float(t.time_us, 7), _float(t.algbw, 6), _float(t.busbw, 6),
             "N/A" if t.wrong is None and t.error is None else
             str(t.wrong) if t.wrong is not None else f"{t.error:.0e}"]
    return f"  {p[0]:>7}  {p[1]:>6}  {p[2]:>6}  {p[3]:>6}"


def _expected(c: Comparison) -> str:
    if c.expected_time is None:
        return f"  {'-':>7}  {'-':>6}  {'-':>5}  -"
    alg = c.algorithm + (f"/{c.protocol}" if c.protocol else "")
    ratio = c.ratio
    return (f"  {_float(c.expected_time * 1e6, 7)}  {_float(c.expected_busbw / 1e9, 6)}  "
            f"{'-' if ratio is None else _float(ratio, 5):>5}  {alg}")


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


@dataclass(frozen=True)
class Diagnosis:
    """One nccl-tests output, the machine it ran on, every row beside NCCL's model, the
    verdict (``healthy``, ``degraded`` or ``unknown``) and the findings."""

    output: Output
    machine: Machine
    rows: tuple[Comparison, ...]
    verdict: str
    findings: tuple[Finding, ...]
    metrics: Metrics

    def __str__(self) -> str:
        return text(self)

    def as_dict(self) -> dict:
        return as_dict(self)

    def finding(self, code: str) -> Finding | None:
        """The first finding with this code, or None."""
        return next((f for f in self.findings if f.code == code), None)


def _title(d: Diagnosis) -> list[str]:
    m = d.machine
    parts = [f"{m.program}_perf"]
    if m.ranks:
        parts.append(f"{m.ranks} ranks")
    if m.hosts:
        parts.append(f"{m.hosts} host{'s' if m.hosts > 1 else ''}")
    if m.gpu:
        parts.append(m.gpu)
    if m.gpus_per_process:
        parts.append(m.launch)
    parts.append(f"NCCL {m.nccl_version}" if m.nccl_version else "NCCL version not printed")
    lines = [f"# collectives diagnose: {', '.join(parts)}"]
    machine = m.spec if m.matched else f"not matched: {m.unmatched}"
    lines += _wrap(f"machine: {machine}. " + "; ".join(m.why), "# ", "#     ")
    if m.matched:
        lines += _wrap(f"model: NCCL's model (the tuner of NCCL {nccl.VERSION}): what nccl-tests "
                       f"would measure; ratio = measured / expected time", "# ", "#     ")
    return lines


def text(d: Diagnosis) -> str:
    out = d.output
    lines = _title(d) + ["#"]
    pad = " " * 52
    lines.append(f"# {pad[2:]}      out-of-place                       in-place          "
                 f"   expected (NCCL's model)")
    lines.append(f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}  "
                 f"{'time':>7}  {'algbw':>6}  {'busbw':>6}  {'#wrong':>6}  {'time':>7}  "
                 f"{'algbw':>6}  {'busbw':>6}  {'#wrong':>6}  {'time':>7}  {'busbw':>6}  "
                 f"{'ratio':>5}  algorithm")
    unit = f"({out.time_unit})"
    lines.append(f"# {'(B)':>10}  {'(elements)':>12}  {'':>8}  {'':>6}  {'':>6}  {unit:>7}  "
                 f"{'(GB/s)':>6}  {'(GB/s)':>6}  {'':>6}  {unit:>7}  {'(GB/s)':>6}  "
                 f"{'(GB/s)':>6}  {'':>6}  {'(us)':>7}  {'(GB/s)':>6}")
    for c in d.rows:
        r = c.row
        lead = (f"{r.nbytes:>12}  {r.count:>12}  {r.type:>8}  {r.redop or '':>6}  "
                f"{'' if r.root is None else r.root:>6}")
        lines.append(lead + _half(r.out_of_place) + _half(r.in_place) + _expected(c))
    if out.out_of_bounds is not None:
        lines.append(f"# {'Out of bounds values':<20} : {out.out_of_bounds} "
                     f"{'FAILED' if out.out_of_bounds else 'OK'}")
    if out.avg_busbw is not None:
        lines.append(f"# {'Avg bus bandwidth':<20} : {out.avg_busbw:g}")
    lines.append("#")
    mt = d.metrics
    lines.append(f"# verdict: {d.verdict}")
    if mt.peak_ratio is not None:
        lines += _wrap(f"{'plateau' if mt.at_plateau else 'largest sizes (below the plateau)'}: "
                       f"{mt.peak_busbw / 1e9:.1f} GB/s busbw measured, "
                       f"{mt.peak_expected / 1e9:.1f} GB/s expected, ratio {mt.peak_ratio:.2f} "
                       f"(slow above {mt.slow_threshold:g})", "#   ", "#     ")
    if mt.floor_ratio is not None:
        lines += _wrap(f"floor: ratio {mt.floor_ratio:.2f} over {mt.floor_rows} sizes up to "
                       f"64 KiB (high above {mt.floor_threshold:g})", "#   ", "#     ")
    if d.findings:
        lines.append("# findings:")
        for f in d.findings:
            lines += _wrap(f"[{f.severity}] {f.title}: {f.evidence}.", "#   - ", "#       ")
            if f.cause:
                lines += _wrap(f"likely: {f.cause}.", "#       ", "#       ")
    else:
        lines.append("# findings: none")
    return "\n".join(lines)


def _timing(t: Timing | None):
    if t is None:
        return None
    return {"time_us": t.time_us, "algbw_gbs": t.algbw, "busbw_gbs": t.busbw,
            "wrong": t.wrong, "error": t.error}


def _clean(value):
    """Strict JSON: no NaN or infinity (None instead)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def as_dict(d: Diagnosis) -> dict:
    m, out = d.machine, d.output
    info = out.info
    rows = []
    for c in d.rows:
        r = c.row
        rows.append({
            "line": r.line, "size": r.nbytes, "count": r.count, "type": r.type, "redop": r.redop,
            "root": r.root, "complete": r.complete, "out_of_place": _timing(r.out_of_place),
            "in_place": _timing(r.in_place),
            "expected": None if c.expected_time is None else {
                "time_us": c.expected_time * 1e6, "busbw_gbs": c.expected_busbw / 1e9,
                "algbw_gbs": r.nbytes / c.expected_time / 1e9, "algorithm": c.algorithm,
                "nccl_algorithm": c.nccl_algorithm, "protocol": c.protocol},
            "ratio": c.ratio})
    return _clean({
        "verdict": d.verdict,
        "findings": [f.as_dict() for f in d.findings],
        "machine": {"program": m.program, "collective": None if m.collective is None else m.collective.value,
                    "ranks": m.ranks, "hosts": m.hosts, "nodes": m.nodes if m.matched else m.hosts,
                    "processes": m.processes, "gpus_per_process": m.gpus_per_process,
                    "launch": m.launch, "gpu": m.gpu, "nccl_version": m.nccl_version,
                    "preset": m.spec, "topology": None if m.topology is None else repr(m.topology),
                    "system": m.system, "matched": m.matched, "unmatched": m.unmatched,
                    "why": list(m.why), "settings": dict(m.settings),
                    "model_options": dict(m.model_options), "fabric_note": m.fabric_note or None},
        "model": {"name": "nccl", "nccl_version": nccl.VERSION} if m.matched else None,
        "metrics": d.metrics.as_dict(),
        "rows": rows,
        "input": {"nccl_tests_version": out.nccl_tests_version, "header": dict(out.header),
                  "devices": len(out.devices), "devices_whole": out.whole_device_count() is not None,
                  "columns": list(out.columns), "time_unit": out.time_unit,
                  "avg_busbw_gbs": out.avg_busbw, "out_of_bounds": out.out_of_bounds,
                  "stopped": out.stopped, "runs": out.runs, "lines": out.lines,
                  "nccl_info": {"lines": info.lines, "version": info.version, "nranks": info.nranks,
                                "nnodes": info.nnodes, "mnnvl": info.mnnvl,
                                "nvls_available": info.nvls_available,
                                "nvls_channels": info.nvls_channels,
                                "coll_channels": info.coll_channels,
                                "ring_channels": info.ring_channels, "network": info.network,
                                "nics": list(info.nics), "link_layers": list(info.link_layers),
                                "gdr": info.gdr, "pxn": info.pxn,
                                "transports": list(info.transports),
                                "settings": dict(info.settings)}},
    })
