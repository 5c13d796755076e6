"""Communication between GPUs: what a collective costs on a link (chapter section 2.4).

A model split over n GPUs must move data between them in every pass:

- tensor parallelism (each weight matrix split over the GPUs) ends the attention block and the MLP with an
  all-reduce: every GPU holds a partial sum of the same hidden states and needs the total (Shoeybi et al.
  2019, Megatron-LM, arXiv:1909.08053, section 3);
- expert parallelism (each GPU holds some of the experts) sends each token's hidden state to the GPUs of its
  experts and brings the results back: an all-to-all to dispatch and one to combine;
- pipeline parallelism (each GPU holds some of the layers) hands the hidden states of a pass from one stage
  to the next: a send.

Each cost is a latency plus bytes over bandwidth (Hockney's model, the one of Thakur, Rabenseifner and Gropp
2005, "Optimization of collective communication operations in MPICH"):

    time = steps x hop latency + bytes each GPU sends / its bandwidth each way

The bandwidth is one GPU's, each way (`hardware.Link.bandwidth`: half a vendor's "bidirectional" NVLink
figure). The hop latencies are those of NCCL's own cost model (`data/links.json`). nccl-tests reports "bus
bandwidth" on the same basis (`bus_bandwidth`), so its published figures check these formulas directly.

Where n GPUs span more than one scale-up domain (`hardware.Interconnect.domain`: 8 on an HGX board), the
collective works in two levels, inside each domain over its link and between domains over the network, one
NIC per GPU. numpy-free: this module imports with the standard library and `chapter2.hardware` alone.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources

from ._checks import finite_real, positive_int
from .hardware import INTERCONNECTS, Interconnect, Link, get_link

__all__ = ["ALGORITHMS", "COLLECTIVES", "all_reduce_time", "all_to_all_time", "send_time", "bus_bandwidth",
           "bus_factor", "Collective", "Communication", "tensor_parallel", "expert_parallel", "pipeline_parallel",
           "PublishedRun", "PUBLISHED_RUNS"]

ALGORITHMS = ("ring", "in_switch", "best")
"""All-reduce algorithms `all_reduce_time` costs: a ring, the switches' own reduction (NVLink SHARP), or the
faster of the two that the link offers."""

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce", "send")


def bus_factor(collective: str, n_gpus: int) -> float:
    """nccl-tests' correction from algorithm bandwidth (size / time) to bus bandwidth (doc/PERFORMANCE.md).

    all_reduce 2(n - 1)/n; reduce_scatter, all_gather and all_to_all (n - 1)/n; broadcast, reduce and send 1:
    the share of the buffer each GPU must send over its own link, so that bus bandwidth compares with the
    link's rate whatever n is.
    """
    n = positive_int("n_gpus", n_gpus)
    factors = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n,
               "all_to_all": (n - 1) / n, "broadcast": 1.0, "reduce": 1.0, "send": 1.0}
    if collective not in factors:
        raise ValueError(f"collective must be one of {', '.join(COLLECTIVES)}, got {collective!r}")
    return factors[collective]


def bus_bandwidth(collective: str, nbytes, n_gpus: int, seconds) -> float:
    """The bus bandwidth nccl-tests prints for a collective of `nbytes` on `n_gpus` GPUs that took `seconds`.

    algbw = nbytes / seconds, busbw = algbw x `bus_factor` (NVIDIA/nccl-tests, doc/PERFORMANCE.md): for a ring
    all-reduce this is the rate each GPU's link carried, whatever the number of GPUs.
    """
    nbytes = finite_real("nbytes", nbytes, low=0)
    seconds = finite_real("seconds", seconds, low=0, low_open=True)
    return nbytes / seconds * bus_factor(collective, n_gpus)


def _levels(link, n: int) -> tuple[Link, int, Link, int]:
    """(scale-up link, GPUs per domain d, scale-out link, domains m) for n GPUs: d = min(n, domain), m = ceil(n / d)."""
    if isinstance(link, Interconnect):
        d = min(n, link.domain)
        return link.link, d, link.scale_out, math.ceil(n / d)
    flat = get_link(link)
    return flat, n, flat, 1


def _ring(nbytes: float, n: int, link: Link) -> float:
    """A ring all-reduce of `nbytes` over `n` GPUs on one link: 2(n - 1) steps, 2(n - 1)/n of the buffer sent."""
    if n == 1:
        return 0.0
    return 2 * (n - 1) * link.hop_latency + 2 * (n - 1) / n * nbytes / link.usable_bandwidth(n)


# --8<-- [start:all_reduce_time]
def all_reduce_time(nbytes, n_gpus, link, *, algorithm="ring") -> float:
    """Seconds to all-reduce (sum, everyone gets the total) a buffer of `nbytes` on each of `n_gpus` GPUs.

    `link` is a `hardware.Link` (or its key: every GPU on that link) or a `hardware.Interconnect` (a GPU's
    scale-up link within its domain, the network between domains). Algorithms:

    - "ring": a reduce-scatter then an all-gather around a ring. Each GPU sends 2(n - 1)/n x nbytes (the
      factor nccl-tests' bus bandwidth divides out) in 2(n - 1) steps, each charged the link's hop latency
      (NCCL's ring cost for its LL protocol: 0.6 us over NVLink, 1.0 over PCIe, 2.7 over a network):

          time = 2(n - 1) x hop latency + 2(n - 1)/n x nbytes / bandwidth

      Past one domain of d GPUs (m = n / d domains): a reduce-scatter and an all-gather inside each domain
      around the ends, and between them an all-reduce of each GPU's nbytes / d share over the network with the
      GPUs of the same rank in the other domains, all d NICs of a domain at once.
    - "in_switch": the switches add the GPUs' data themselves (NVLink SHARP, NCCL's NVLS): each GPU sends its
      buffer to the switch and receives the sum, (1 + 1/n) x nbytes each way, for NCCL's NVLS latency (25 us),
      which is why NCCL uses it for large messages only. Only where the link has it and within one domain.
    - "best": the faster of the two the link offers (what NCCL's tuner picks).

    At a decode step's few kilobytes the latency term is nearly all of it: 8 GPUs on NVLink 4 take
    14 x 0.6 = 8.4 us for 8 KiB, of which the bytes are 0.03 us.
    """
    nbytes = finite_real("nbytes", nbytes, low=0)
    n = positive_int("n_gpus", n_gpus)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    up, d, out, m = _levels(link, n)
    if n == 1:
        return 0.0
    in_switch = up.in_switch_reduction and m == 1
    if algorithm == "in_switch":
        if not in_switch:
            raise ValueError(f"{up.name} cannot reduce in its switches for {n} GPUs: use algorithm 'ring' or 'best'")
        return up.in_switch_latency + (1 + 1 / n) * nbytes / up.bandwidth
    if m == 1:
        ring = _ring(nbytes, n, up)
    else:  # reduce-scatter + all-gather inside each domain, an all-reduce of each GPU's share between domains
        ring = _ring(nbytes, d, up) + _ring(nbytes / d, m, out)
    if algorithm == "best" and in_switch:
        return min(ring, up.in_switch_latency + (1 + 1 / n) * nbytes / up.bandwidth)
    return ring
# --8<-- [end:all_reduce_time]


def all_to_all_time(nbytes, n_gpus, link) -> float:
    """Seconds for an all-to-all: each of `n_gpus` GPUs sends nbytes / n to every GPU (itself included).

    Each GPU sends (n - 1)/n x nbytes (nccl-tests' all-to-all bus factor) to all its peers at once, so one hop
    latency is charged: time = hop latency + (n - 1)/n x nbytes / bandwidth. On a mesh each peer has a link of
    its own (n - 1 links at once). Past one domain of d GPUs, the (n - d)/n going to other domains crosses the
    network while the (d - 1)/n staying home crosses the scale-up link, both at once: the slower sets the time,
    and the network's hop latency is charged. This is how a mixture of experts dispatches tokens to the GPUs
    of their experts, and combines the results (DeepEP, github.com/deepseek-ai/DeepEP).
    """
    nbytes = finite_real("nbytes", nbytes, low=0)
    n = positive_int("n_gpus", n_gpus)
    up, d, out, m = _levels(link, n)
    if n == 1:
        return 0.0
    if m == 1:
        return up.hop_latency + (n - 1) / n * nbytes / up.usable_bandwidth(n)
    inside = (d - 1) / n * nbytes / up.usable_bandwidth(d) if d > 1 else 0.0
    return out.hop_latency + max(inside, (n - d) / n * nbytes / out.bandwidth)


def send_time(nbytes, link, *, across_domains=False) -> float:
    """Seconds to send `nbytes` from one GPU to another: hop latency + nbytes / bandwidth.

    On a mesh the one link between the two GPUs carries it. With an Interconnect, `across_domains` says the
    two GPUs sit in different domains (the network carries it). A pipeline's stages hand each pass's hidden
    states on this way.
    """
    nbytes = finite_real("nbytes", nbytes, low=0)
    if isinstance(link, Interconnect):
        chosen = link.scale_out if across_domains else link.link
    else:
        chosen = get_link(link)
    rate = chosen.peer_bandwidth if chosen.topology == "mesh" else chosen.bandwidth
    return chosen.hop_latency + nbytes / rate


# --------------------------------------------------------------------------- what a pass sends


@dataclass(frozen=True)
class Collective:
    """`count` collectives of one kind in a pass, each of `nbytes` per GPU taking `seconds`.

    `overlapped` is True where an engine can hide it behind computation (see `Communication`).
    """

    kind: str
    purpose: str
    count: int
    nbytes: float
    seconds: float
    overlapped: bool

    @property
    def total(self) -> float:
        return self.count * self.seconds


@dataclass(frozen=True)
class Communication:
    """Every collective of one pass on `n_gpus` GPUs, and the link(s) it used (`link`, in words).

    `scale_up` is the link within a domain of `domain_gpus` GPUs; past one domain (`domains` > 1) the
    `scale_out` link joins them.

    The convention of the chapter's bound: a collective another computation cannot wait out sits on the
    critical path and adds to the pass (`exposed`): tensor parallelism's all-reduces (the next layer needs
    the sum) and a pipeline's hand-offs within one pass. Expert parallelism's all-to-alls are `overlapped`:
    DeepSeek's engine splits the batch in two and computes one half while the other's tokens travel
    (DeepSeek-V3 report, arXiv:2412.19437, section 3.4), so they cost only what exceeds the computation.
    """

    n_gpus: int
    link: str
    collectives: tuple[Collective, ...] = ()
    scale_up: Link | None = None
    domain_gpus: int = 1
    domains: int = 1
    scale_out: Link | None = None

    @property
    def seconds(self) -> float:
        """All the collectives' time, one after another."""
        return sum(c.total for c in self.collectives)

    @property
    def exposed(self) -> float:
        return sum(c.total for c in self.collectives if not c.overlapped)

    @property
    def overlapped(self) -> float:
        return sum(c.total for c in self.collectives if c.overlapped)


def _link_name(link, n: int) -> str:
    """The link(s) n GPUs use, in a few words: "NVLink 4", or "NVLink 4 in 2 domains of 8, InfiniBand NDR between"."""
    up, d, out, m = _levels(link, n)
    if m == 1:
        return up.short
    return f"{up.short} in {m} domains of {d}, {out.short} between"


def _talk(link, n: int, collectives: tuple[Collective, ...]) -> Communication:
    """A Communication of `collectives` on n GPUs over `link`, with its levels named."""
    up, d, out, m = _levels(link, n)
    return Communication(n, _link_name(link, n), collectives, up, d, m, out if m > 1 else None)


def tensor_parallel(layers: int, tokens, hidden: int, act_bytes, n_gpus: int, link, *,
                    algorithm="best") -> Communication:
    """Tensor parallelism's collectives in one pass of `tokens` tokens: 2 all-reduces per layer.

    The attention block's output projection and the MLP's down projection are split by rows (Megatron-LM),
    so each ends in a sum over the GPUs of a (tokens, hidden) activation: `tokens x hidden x act_bytes` bytes
    per all-reduce, 2 x `layers` of them. The input embedding's and the LM head's own collectives (one each per
    pass) are left out, which keeps it a lower bound.
    """
    layers = positive_int("layers", layers)
    nbytes = finite_real("tokens", tokens, low=0) * positive_int("hidden", hidden) * finite_real("act_bytes", act_bytes, low=0)
    n = positive_int("n_gpus", n_gpus)
    each = all_reduce_time(nbytes, n, link, algorithm=algorithm)
    return _talk(link, n, (Collective(
        "all-reduce", "tensor parallel: after attention and after the MLP, in every layer", 2 * layers, nbytes, each,
        overlapped=False),))


def expert_parallel(moe_layers: int, tokens, experts_per_token, hidden: int, act_bytes, n_gpus: int,
                    link) -> Communication:
    """Expert parallelism's collectives in one pass: an all-to-all to dispatch and one to combine per MoE layer.

    Attention runs data parallel (each GPU its share of the tokens, tokens / n), so each GPU sends each of its
    tokens' hidden states to the GPUs of its k experts and receives the results back: a buffer of
    (tokens / n) x k x hidden x act_bytes per GPU in each direction, for every MoE layer. Overlapped (see
    `Communication`).
    """
    n = positive_int("n_gpus", n_gpus)
    k = finite_real("experts_per_token", experts_per_token, low=0)
    per_gpu = finite_real("tokens", tokens, low=0) / n * k * positive_int("hidden", hidden) * finite_real(
        "act_bytes", act_bytes, low=0)
    each = all_to_all_time(per_gpu, n, link)
    count = positive_int("moe_layers", moe_layers)
    return _talk(link, n, (
        Collective("all-to-all", "expert parallel: dispatch tokens to their experts' GPUs", count, per_gpu, each,
                   overlapped=True),
        Collective("all-to-all", "expert parallel: combine the experts' outputs", count, per_gpu, each,
                   overlapped=True)))


def pipeline_parallel(tokens, hidden: int, act_bytes, n_gpus: int, link) -> Communication:
    """A pipeline's hand-offs in one pass: n - 1 sends of the pass's hidden states, stage to stage.

    Stages sit on consecutive GPUs, so with an Interconnect of domain d the hand-offs between domains (one per
    domain boundary, ceil(n / d) - 1) cross the network and the rest the scale-up link. A pass waits for each
    (added, see `Communication`).
    """
    n = positive_int("n_gpus", n_gpus)
    nbytes = finite_real("tokens", tokens, low=0) * positive_int("hidden", hidden) * finite_real("act_bytes", act_bytes, low=0)
    if n == 1:
        return _talk(link, 1, ())
    _, d, _, m = _levels(link, n)
    across, inside = m - 1, n - 1 - (m - 1)
    parts = []
    if inside:
        parts.append(Collective("send", "pipeline: hand the hidden states to the next stage", inside, nbytes,
                                send_time(nbytes, link), overlapped=False))
    if across:
        parts.append(Collective("send", "pipeline: hand the hidden states to the next stage, across domains", across,
                                nbytes, send_time(nbytes, link, across_domains=True), overlapped=False))
    return _talk(link, n, tuple(parts))


# --------------------------------------------------------------------------- published runs, to check against


@dataclass(frozen=True)
class PublishedRun:
    """A collective measured and published (nccl-tests, DeepEP), its figures as printed (`data/links.json`).

    `busbw` is the bus bandwidth printed (GB/s; DeepEP's "bottleneck bandwidth", the bytes its busiest link
    carried over the time), `algbw` nccl-tests' algorithm bandwidth where given. `link` is the link the
    traffic crossed on the run's GPUs: the scale-up link within one domain, the network past it.
    """

    id: str
    what: str
    gpu: str
    n_gpus: int
    collective: str
    algorithm: str
    algbw: float | None
    busbw: float
    source: str
    note: str

    @property
    def link(self) -> Link:
        ic = INTERCONNECTS[self.gpu]
        return ic.link if self.n_gpus <= ic.domain else ic.scale_out

    @property
    def share_of_link(self) -> float:
        """Published bus bandwidth over the link's rate each way: below 1 for a ring, above for NVLink SHARP."""
        return self.busbw * 1e9 / self.link.usable_bandwidth(min(self.n_gpus, INTERCONNECTS[self.gpu].domain))


def _published_runs() -> tuple[PublishedRun, ...]:
    raw = json.loads(resources.files("chapter2").joinpath("data", "links.json").read_text(encoding="utf-8"))
    runs = []
    for r in raw["published_runs"]:
        if not str(r["source"]).startswith("https://") or r["gpu"] not in INTERCONNECTS:
            raise ValueError(f"links.json: published run {r['id']} needs a source URL and a catalog GPU")
        bus_factor(r["collective"], r["n_gpus"])  # a known collective
        runs.append(PublishedRun(r["id"], r["what"], r["gpu"], int(r["n_gpus"]), r["collective"], r["algorithm"],
                                 r["algbw_gb_s"], float(r["busbw_gb_s"]), r["source"], r["note"]))
    return tuple(runs)


PUBLISHED_RUNS = _published_runs()
"""Collectives measured and published, to check the formulas against (tests/test_communication.py, page 2.4)."""
