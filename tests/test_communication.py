"""Communication between GPUs (chapter section 2.4; issue 32 item 2): the link catalog and the collective costs.

The formulas are checked three ways: against the cost nccl-tests' own definition gives by hand
(NVIDIA/nccl-tests, doc/PERFORMANCE.md: t = (S / B) x 2(n - 1)/n for an all-reduce), against published
nccl-tests and DeepEP figures (a bound must never be faster than a run, and the bus bandwidth the formula
implies must be what nccl-tests prints), and against the link figures as the vendors print them.
"""

import json
from importlib import resources

import pytest

from chapter2 import communication, hardware
from chapter2.communication import all_reduce_time, all_to_all_time, bus_bandwidth, send_time

RAW = json.loads(resources.files("chapter2").joinpath("data", "links.json").read_text(encoding="utf-8"))
GiB = 1 << 30
NVLINK4 = hardware.LINKS["nvlink4"]


# ------------------------------------------------------------------ the catalog


def test_links_are_the_vendors_figures_one_direction():
    # NVLink, PCIe and Infinity Fabric are printed as both directions together; InfiniBand per direction in Gb/s
    each_way = {"nvlink3": 600 / 2, "nvlink4": 900 / 2, "nvlink4-h800": 400 / 2, "nvlink5": 1800 / 2,
                "pcie4": 64 / 2, "pcie5": 128 / 2, "ib-hdr": 200 / 8, "ib-ndr": 400 / 8, "ib-xdr": 800 / 8,
                "infinity-fabric-3": 7 * 128 / 2, "infinity-fabric-4": 7 * 153.6 / 2}
    assert set(each_way) == set(hardware.LINKS)
    for key, gb_s in each_way.items():
        assert hardware.LINKS[key].bandwidth == pytest.approx(gb_s * 1e9), key
    # a mesh gives n GPUs n - 1 links each: 2 MI300Xs share one link of 64 GB/s each way, 8 use all seven
    mesh = hardware.LINKS["infinity-fabric-3"]
    assert mesh.usable_bandwidth(2) == pytest.approx(64e9) and mesh.usable_bandwidth(8) == pytest.approx(448e9)
    assert NVLINK4.usable_bandwidth(2) == NVLINK4.usable_bandwidth(8) == 450e9  # a switch: the whole rate to anyone


def test_every_gpu_has_its_links_each_figure_sourced_or_assumed_with_a_reason():
    assert set(hardware.INTERCONNECTS) == set(hardware.GPUS)
    for key, ic in hardware.INTERCONNECTS.items():
        assert set(ic.sources) | set(ic.assumed) == {"domain", "scale_out"}, key
        assert all(url.startswith("https://") for url in ic.sources.values()), key
        assert all(len(reason) > 20 for reason in ic.assumed.values()), key
    for key, link in hardware.LINKS.items():
        assert link.sources["bandwidth"].startswith("https://") and link.sources["latency"].startswith("https://"), key
    # the domains the issue names: 8 GPUs on an HGX board, 72 in an NVL72 rack
    domains = {key: ic.domain for key, ic in hardware.INTERCONNECTS.items()}
    assert domains["H100-SXM"] == domains["B200"] == domains["A100-SXM"] == 8
    assert domains["GB200"] == domains["GB300"] == 72
    # generations per GPU
    assert [hardware.INTERCONNECTS[g].link.key for g in ("A100-SXM", "H100-SXM", "H200-SXM", "B200", "GB200")] == [
        "nvlink3", "nvlink4", "nvlink4", "nvlink5", "nvlink5"]
    assert hardware.INTERCONNECTS["L40S"].link.key == "pcie4" and hardware.INTERCONNECTS["RTX-PRO-6000"].link.key == "pcie5"
    assert hardware.INTERCONNECTS["H800-SXM"].link.bandwidth == 200e9  # the export cut: 400 GB/s both ways
    # NCCL's per-step latencies (src/graph/tuning.cc, Ring LL): NVLink 0.6 us, PCIe 1.0, network 2.7
    assert (NVLINK4.hop_latency, hardware.LINKS["pcie4"].hop_latency, hardware.LINKS["ib-ndr"].hop_latency) == (
        pytest.approx(0.6e-6), pytest.approx(1.0e-6), pytest.approx(2.7e-6))


def test_links_json_refuses_unsourced_figures(monkeypatch):
    raw = json.loads(json.dumps(RAW))
    raw["links"]["nvlink4"]["bidirectional_gb_s"].pop("source")
    with pytest.raises(ValueError, match="nvlink4.bidirectional_gb_s needs a source URL"):
        hardware._link("nvlink4", raw["links"]["nvlink4"], raw["latency_us"])
    raw["gpus"]["L4"]["domain"]["assumed"] = " "
    links = {k: hardware._link(k, v, RAW["latency_us"]) for k, v in RAW["links"].items()}
    with pytest.raises(ValueError, match="assumed without a reason"):
        hardware._interconnect("L4", raw["gpus"]["L4"], links)


def test_custom_gpus_and_bad_links_get_clear_messages():
    custom = hardware.custom_gpu(500, 2)
    with pytest.raises(ValueError, match="custom has no link in the catalog .*choose a link, one of nvlink3"):
        hardware.interconnect(custom)
    assert hardware.interconnect(custom, "pcie5").link.key == "pcie5"
    with pytest.raises(ValueError, match="link must be one of nvlink3, .*got 'nvlink9'"):
        hardware.get_link("nvlink9")
    with pytest.raises(ValueError, match="algorithm must be one of ring, in_switch, best, got 'tree'"):
        all_reduce_time(1, 2, NVLINK4, algorithm="tree")
    with pytest.raises(ValueError, match="cannot reduce in its switches"):
        all_reduce_time(1, 2, "nvlink3", algorithm="in_switch")
    with pytest.raises(ValueError, match="n_gpus"):
        all_reduce_time(1, 0, NVLINK4)


# ------------------------------------------------------------------ the formulas, by hand


def test_ring_all_reduce_is_performance_md_time_plus_a_latency_per_step():
    # nccl-tests' PERFORMANCE.md: an all-reduce of S bytes over n ranks of bandwidth B takes at best
    # t = (S / B) x 2(n - 1)/n; 1 GiB over 8 GPUs at 450 GB/s: 1,073,741,824 x 1.75 / 450e9 = 4.17566 ms.
    # The ring's 14 steps add 14 x 0.6 us.
    assert all_reduce_time(GiB, 8, NVLINK4) == pytest.approx(4.17566e-3 + 8.4e-6, rel=1e-5)
    # a decode step's message: 8 KiB is nearly all latency, 8.4 us of which the bytes are 0.0319 us
    assert all_reduce_time(8192, 8, NVLINK4) == pytest.approx(8.4e-6 + 0.0319e-6, rel=1e-3)
    assert all_reduce_time(8192, 1, NVLINK4) == 0
    # 2 GPUs: 2 steps, half the buffer... each way: S x 2(1)/2 = S
    assert all_reduce_time(GiB, 2, NVLINK4) == pytest.approx(1.2e-6 + GiB / 450e9)


def test_in_switch_reduction_and_the_faster_of_the_two():
    # NVLink SHARP: each GPU sends its buffer to the switch and receives the sum, (1 + 1/n) S each way,
    # for NCCL's NVLS latency of 25 us
    assert all_reduce_time(GiB, 8, NVLINK4, algorithm="in_switch") == pytest.approx(25e-6 + 1.125 * GiB / 450e9)
    # small messages: the ring (8.4 us) beats 25 us; large ones: the switch (1.125 S against 1.75 S)
    assert all_reduce_time(8192, 8, NVLINK4, algorithm="best") == all_reduce_time(8192, 8, NVLINK4)
    assert all_reduce_time(GiB, 8, NVLINK4, algorithm="best") == all_reduce_time(GiB, 8, NVLINK4, algorithm="in_switch")


def test_past_one_domain_the_all_reduce_works_in_two_levels():
    # 16 H100s: two HGX boards of 8. Inside each board a reduce-scatter and an all-gather (a ring of 8 on NVLink 4),
    # between them each GPU all-reduces its 1/8 share with its twin on the other board over its own 400 Gb/s NIC
    # (a ring of 2: 2 steps of 2.7 us, its share once each way at 50 GB/s).
    h100 = hardware.INTERCONNECTS["H100-SXM"]
    S = 64 * 2**20
    inside = 14 * 0.6e-6 + 1.75 * S / 450e9
    between = 2 * 2.7e-6 + (S / 8) / 50e9
    assert all_reduce_time(S, 16, h100) == pytest.approx(inside + between)
    assert all_reduce_time(S, 8, h100) == pytest.approx(inside)  # within one board, the network is not used
    # an NVL72 rack keeps 64 GPUs in one domain
    gb200 = hardware.INTERCONNECTS["GB200"]
    assert all_reduce_time(S, 64, gb200) == pytest.approx(126 * 0.6e-6 + 2 * 63 / 64 * S / 900e9)


def test_all_to_all_and_send_by_hand():
    # each of 8 GPUs sends 7/8 of its buffer at once: one step
    assert all_to_all_time(8e6, 8, NVLINK4) == pytest.approx(0.6e-6 + 7 / 8 * 8e6 / 450e9)
    # 16 H100s: 7/16 of the buffer stays on the board (NVLink), 8/16 crosses the NIC; the slower sets the time
    h100 = hardware.INTERCONNECTS["H100-SXM"]
    assert all_to_all_time(8e6, 16, h100) == pytest.approx(2.7e-6 + 8 / 16 * 8e6 / 50e9)
    # a mesh of 8 MI300Xs: 7 peers, one link each (64 GB/s each way)
    assert all_to_all_time(8e6, 8, "infinity-fabric-3") == pytest.approx(0.6e-6 + 7 / 8 * 8e6 / 448e9)
    assert send_time(1e6, NVLINK4) == pytest.approx(0.6e-6 + 1e6 / 450e9)
    assert send_time(1e6, "infinity-fabric-3") == pytest.approx(0.6e-6 + 1e6 / 64e9)  # one link to that peer
    assert send_time(1e6, h100, across_domains=True) == pytest.approx(2.7e-6 + 1e6 / 50e9)


def test_what_a_pass_sends():
    # Llama 3.1 8B (32 layers, hidden 4,096) decoding 4 sequences on 8 H100s, BF16 activations
    tp = communication.tensor_parallel(32, 4, 4096, 2, 8, hardware.INTERCONNECTS["H100-SXM"])
    assert tp.collectives[0].count == 64 and tp.collectives[0].nbytes == 4 * 4096 * 2
    assert tp.seconds == tp.exposed == pytest.approx(64 * (8.4e-6 + 1.75 * 32768 / 450e9)) and tp.overlapped == 0
    assert tp.link == "NVLink 4"
    # expert parallel: 64 tokens over 8 GPUs, 8 each; k = 8 experts per token, hidden 7,168, FP8: 8 x 8 x 7,168 bytes
    # per GPU per all-to-all, a dispatch and a combine in each of 58 MoE layers, overlapped
    ep = communication.expert_parallel(58, 64, 8, 7168, 1, 8, NVLINK4)
    per_gpu = 8 * 8 * 7168
    assert [c.nbytes for c in ep.collectives] == [per_gpu, per_gpu] and ep.exposed == 0
    assert ep.overlapped == pytest.approx(2 * 58 * (0.6e-6 + 7 / 8 * per_gpu / 450e9))
    # a pipeline of 16 H100 stages: 15 hand-offs, one of them between the two boards
    pp = communication.pipeline_parallel(100, 4096, 2, 16, hardware.INTERCONNECTS["H100-SXM"])
    nbytes = 100 * 4096 * 2
    assert [c.count for c in pp.collectives] == [14, 1]
    assert pp.exposed == pytest.approx(14 * (0.6e-6 + nbytes / 450e9) + 2.7e-6 + nbytes / 50e9)
    assert pp.link == "NVLink 4 in 2 domains of 8, InfiniBand NDR between"


# ------------------------------------------------------------------ against published NCCL and DeepEP figures

# (GPUs, algorithm bandwidth GB/s, bus bandwidth GB/s) as published, all-reduce on 8 GPUs of one board
PUBLISHED_BUSBW = [
    # nccl-tests#212, NCCL's maintainer: NVLink SHARP on 8 H100s, "peak busBw of ~480GB/s (algbw ~275GB/s)"
    ("H100, NVLink SHARP", 8, 275, 480, "https://github.com/NVIDIA/nccl-tests/issues/212"),
    # nccl#2140: 8 H100s with NVLS off / on, 8 B300s off / on
    ("H100, ring", 8, 211, 370, "https://github.com/NVIDIA/nccl/issues/2140"),
    ("B300, ring", 8, 397, 695, "https://github.com/NVIDIA/nccl/issues/2140"),
    ("B300, NVLink SHARP", 8, 483, 845, "https://github.com/NVIDIA/nccl/issues/2140"),
]


@pytest.mark.parametrize("what, n, algbw, busbw, url", PUBLISHED_BUSBW)
def test_bus_bandwidth_is_nccl_tests_definition(what, n, algbw, busbw, url):
    # a run of S bytes in S / algbw seconds: bus_bandwidth must print what nccl-tests printed
    S = 8 * GiB
    assert bus_bandwidth("all_reduce", S, n, S / (algbw * 1e9)) / 1e9 == pytest.approx(busbw, rel=0.005)


def test_published_ring_runs_stay_below_the_link_and_the_bound_below_them():
    # a ring's bus bandwidth is the rate on each GPU's link: below the line rate, by NCCL's protocol overhead
    # ("450GB/s is the line rate. With the protocol overhead (~20%) NCCL can get ... 370GB/s", nccl-tests#212;
    # 365-370 GB/s on 2 to 8 H100s, nccl#1455)
    for busbw, link in ((370, "nvlink4"), (365, "nvlink4"), (695, "nvlink5")):
        assert 0.75 < busbw / (hardware.LINKS[link].bandwidth / 1e9) < 1
    # so the ring formula at the line rate is never slower than the run: a lower bound
    S = 8 * GiB
    run = S / (211e9)  # 8 H100s, ring: algbw 211 GB/s
    assert all_reduce_time(S, 8, NVLINK4) < run < 1.25 * all_reduce_time(S, 8, NVLINK4)
    # NVLink SHARP beats the ring's line-rate bus bandwidth (480 > 450), which the ring formula could not bound;
    # the in-switch formula does, and "best" takes it
    assert 480 > NVLINK4.bandwidth / 1e9
    sharp_run = S / 275e9
    assert all_reduce_time(S, 8, NVLINK4, algorithm="best") < sharp_run < all_reduce_time(S, 8, NVLINK4)


def test_published_small_messages_take_longer_than_the_latency_term():
    # nccl#1259: 2 H100s (HGX), 128 bytes, CUDA graphs: 5.56 us (the ring gave the same); the bound: 2 steps x 0.6 us
    assert all_reduce_time(128, 2, NVLINK4, algorithm="best") < 5.56e-6
    # gardenlinux#4556: 2 RTX PRO 6000 on PCIe (TP=2), 8 bytes: 8.72 us; the bound: 2 steps x 1.0 us
    assert all_reduce_time(8, 2, hardware.INTERCONNECTS["RTX-PRO-6000"]) < 8.72e-6
    # NCCL's own model charges 6.6 us more per collective (its Ring LL base latency), which the bound leaves out:
    # with it, the 2-GPU NVLink figure would be 7.8 us, slower than the 5.56 us measured
    assert all_reduce_time(128, 2, NVLINK4) + 6.6e-6 > 5.56e-6


def test_deepep_all_to_all_runs_stay_below_the_link_and_the_bound_below_them():
    # DeepEP's README (commit 77bb07a, Feb 2025): H800s, ~160 GB/s NVLink, CX7 400 Gb/s (~50 GB/s).
    # Intranode EP8 dispatch/combine 153/158 GB/s over NVLink; internode 43-47 GB/s over RDMA.
    for gb_s, link in ((153, "nvlink4-h800"), (158, "nvlink4-h800"), (43, "ib-ndr"), (47, "ib-ndr")):
        assert 0.75 < gb_s / (hardware.LINKS[link].bandwidth / 1e9) < 1
    # Low-latency kernels, pure RDMA, EP8: 128 tokens, top-8, hidden 7,168. Dispatch in FP8 with a 4-byte scale
    # per 128 numbers (7,168 + 224 bytes a copy): 163 us; combine in BF16: 318 us.
    dispatch = 128 * 8 * (7168 + 7168 // 128 * 4)
    combine = 128 * 8 * 7168 * 2
    assert dispatch / 163e-6 / 1e9 == pytest.approx(46, abs=0.5)  # DeepEP's own "46 GB/s"
    assert all_to_all_time(dispatch, 8, "ib-ndr") < 163e-6 < 1.3 * all_to_all_time(dispatch, 8, "ib-ndr")
    assert all_to_all_time(combine, 8, "ib-ndr") < 318e-6 < 1.3 * all_to_all_time(combine, 8, "ib-ndr")


def test_published_runs_are_read_as_printed_and_the_bound_never_beats_them():
    printed = {"h100-ring": (211, 370), "h100-sharp": (275, 480), "b300-ring": (397, 695), "b300-sharp": (483, 845),
               "h800-deepep-nvlink": (None, 153), "h800-deepep-rdma": (None, 43)}
    runs = {r.id: r for r in communication.PUBLISHED_RUNS}
    assert {k: (r.algbw, r.busbw) for k, r in runs.items()} == printed
    assert runs["h800-deepep-rdma"].link.key == "ib-ndr" and runs["h800-deepep-nvlink"].link.key == "nvlink4-h800"
    for run in runs.values():
        if run.algbw is None:
            continue
        S = 8 * GiB  # a run of S bytes took S / algbw; the bound for the same S on the run's GPUs must not be faster
        bound = all_reduce_time(S, run.n_gpus, hardware.INTERCONNECTS[run.gpu], algorithm="best")
        assert bound < S / (run.algbw * 1e9), run.id
        # the ring alone bounds every ring run (on 8 H100s NVLink SHARP beats it: see above; on B300s it does not)
        ring = all_reduce_time(S, run.n_gpus, hardware.INTERCONNECTS[run.gpu])
        assert ring < S / (run.algbw * 1e9) or run.id == "h100-sharp", run.id
