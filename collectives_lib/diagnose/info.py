"""What ``NCCL_DEBUG=INFO`` lines in an nccl-tests output say: NCCL's version, its rings,
trees and channels, NVLS, the network and the algorithm it ran per size.

Introduced with the ``diagnose`` verb (chapter *Running and reading NCCL*).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class NcclInfo:
    """What NCCL's ``NCCL_DEBUG=INFO`` lines say (``None``: not said)."""

    version: str | None = None
    nranks: int | None = None
    nnodes: int | None = None
    local_ranks: int | None = None
    mnnvl: bool | None = None
    nvls_available: bool | None = None
    nvls_channels: int | None = None
    coll_channels: int | None = None
    ring_channels: int | None = None
    network: str | None = None          # "IB", "IBext", "Socket", "AWS Libfabric", ...
    nics: tuple[str, ...] = ()          # from "NET/IB : Using [0]mlx5_0:1/IB [1]..."
    link_layers: tuple[str, ...] = ()   # "IB", "RoCE"
    gdr: bool | None = None             # GPUDirect RDMA for the network
    pxn: bool | None = None
    transports: tuple[str, ...] = ()    # "P2P/CUMEM", "SHM", "NET/IB", "NET/IB/GDRDMA", ...
    settings: tuple[tuple[str, str], ...] = ()   # ("NCCL_ALGO", "Ring") from "set by environment"
    choices: tuple[tuple[int, str, str], ...] = ()   # (bytes, algorithm, protocol) NCCL ran,
    #                                     from NCCL_DEBUG_SUBSYS=TUNING's "AllReduce: N Bytes -> Algo"
    lines: int = 0                      # NCCL INFO lines read

    def choice(self, nbytes: int) -> tuple[str, str] | None:
        """(algorithm, protocol) NCCL's log says it ran for this many bytes, or None."""
        for n, a, p in self.choices:
            if n == nbytes:
                return a, p
        return None

    @property
    def present(self) -> bool:
        return self.lines > 0 or self.version is not None


INFO_PATTERNS = {
    "version": re.compile(r"\bNCCL version (\d+\.\d+\.\d+)"),
    "comm": re.compile(r"\bcomm 0x[0-9a-f]+ rank \d+ nRanks (\d+) nNodes (\d+) localRanks (\d+)"
                       r"(?: localRank \d+)?(?: MNNVL (\d+))?", re.I),
    "init": re.compile(r"\bcomm 0x[0-9a-f]+ rank \d+ nranks (\d+) cudaDev", re.I),
    "nvls": re.compile(r"\bNVLS multicast support is (not )?available"),
    "channels": re.compile(r"\b(\d+) coll channels,(?: (\d+) collnet channels,)?"
                           r"(?: (\d+) nvls channels,)?"),
    "ring": re.compile(r"\bChannel (\d+)/(\d+) :\s+\d+(?:\s+\d+)+\s*$"),
    "network": re.compile(r"\bUsing network (\S.*?)\s*$"),
    "nics": re.compile(r"\bNET/(?:IB|IBext\w*|GIN\w*)\s*: Using ((?:\[\d+\]\S+\s*)+)"),
    "rings": re.compile(r"\bConnected all rings(?:, use ring PXN (\d) GDR (\d))?"),
    "via": re.compile(r"\bvia ((?:P2P|SHM|NET|COLLNET)/[^\s]+(?: pointer)?)"),
    "setting": re.compile(r"\b(NCCL_[A-Z0-9_]+) set (?:by environment )?to (\S+?)\.?\s*$"),
    "gdr_off": re.compile(r"\bGPU Direct RDMA Disabled\b", re.I),
    "choice": re.compile(r"\b(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+)"),
}


class InfoReader:
    def __init__(self):
        self.d = {"transports": set(), "settings": {}, "nics": (), "link_layers": set(), "lines": 0,
                  "choices": {}}

    def feed(self, msg: str) -> None:
        d = self.d
        d["lines"] += 1
        p = INFO_PATTERNS
        if m := p["version"].search(msg):
            d.setdefault("version", m.group(1))
        if m := p["comm"].search(msg):
            d["nranks"], d["nnodes"], d["local_ranks"] = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if m.group(4) is not None:
                d["mnnvl"] = m.group(4) != "0"
        elif m := p["init"].search(msg):
            d.setdefault("nranks", int(m.group(1)))
        if m := p["nvls"].search(msg):
            avail = m.group(1) is None
            d["nvls_available"] = avail if "nvls_available" not in d else (d["nvls_available"] and avail)
        if m := p["channels"].search(msg):
            d["coll_channels"] = int(m.group(1))
            if m.group(3) is not None:
                d["nvls_channels"] = int(m.group(3))
        if m := p["ring"].search(msg):
            d["ring_channels"] = max(d.get("ring_channels", 0), int(m.group(2)))
        if m := p["network"].search(msg):
            d.setdefault("network", m.group(1))
        if m := p["nics"].search(msg):
            nics = tuple(re.findall(r"\[\d+\](\S+)", m.group(1)))
            if len(nics) > len(d["nics"]):
                d["nics"] = nics
            for nic in nics:
                for layer in ("RoCE", "IB"):
                    if f"/{layer}" in nic:
                        d["link_layers"].add(layer)
                        break
        if m := p["rings"].search(msg):
            if m.group(1) is not None:
                d["pxn"] = d.get("pxn", False) or m.group(1) == "1"
                gdr = m.group(2) == "1"
                d["gdr"] = gdr if "gdr" not in d else (d["gdr"] and gdr)
        if p["gdr_off"].search(msg):
            d["gdr"] = False
        for m in p["via"].finditer(msg):
            kind = m.group(1)
            parts = kind.split("/")
            if parts[0] == "NET":
                name = "NET/" + parts[1] + ("/GDRDMA" if "GDRDMA" in parts[2:] else "")
                if "GDRDMA" in parts[2:]:
                    d["gdr"] = d.get("gdr", True) and True
            else:
                name = "/".join(parts[:2]).replace(" pointer", "")
            d["transports"].add(name)
        if m := p["choice"].search(msg):
            d["choices"].setdefault(int(m.group(2)), (m.group(3).upper(), m.group(4).upper()))
        if m := p["setting"].search(msg):
            d["settings"][m.group(1)] = m.group(2).rstrip(".")

    def info(self) -> NcclInfo:
        d = dict(self.d)
        nets = [t for t in d["transports"] if t.startswith("NET/")]
        if nets and "gdr" not in d:
            d["gdr"] = any(t.endswith("/GDRDMA") for t in nets)
        return NcclInfo(
            version=d.get("version"), nranks=d.get("nranks"), nnodes=d.get("nnodes"),
            local_ranks=d.get("local_ranks"), mnnvl=d.get("mnnvl"),
            nvls_available=d.get("nvls_available"), nvls_channels=d.get("nvls_channels"),
            coll_channels=d.get("coll_channels"), ring_channels=d.get("ring_channels"),
            network=d.get("network"), nics=d["nics"], link_layers=tuple(sorted(d["link_layers"])),
            gdr=d.get("gdr"), pxn=d.get("pxn"), transports=tuple(sorted(d["transports"])),
            settings=tuple(sorted(d["settings"].items())),
            choices=tuple((n, a, p) for n, (a, p) in sorted(d["choices"].items())), lines=d["lines"])
