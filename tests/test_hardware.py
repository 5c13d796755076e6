"""The GPU catalog: the chapter's 295, a source for every number, dense peaks with sparse ones flagged."""

import json
import math
import subprocess
import sys
from importlib import resources

import pytest

from chapter2 import calculators
from chapter2.hardware import GPUS, custom_gpu, get_gpu

REQUIRED = ["A100-SXM", "H100-SXM", "H200-SXM", "B200", "L4", "L40S", "MI300X",
            "H800-SXM", "H20", "GH200", "GB200", "GB300", "MI325X", "MI355X", "RTX-PRO-6000"]


def raw_catalog():
    return json.loads(resources.files("chapter2").joinpath("data", "gpus.json").read_text(encoding="utf-8"))


def test_h100_ops_per_byte_is_the_chapters_295():
    # Chapter 2.4.1: about 989 TFLOPS of FP16 against 3.35 TB/s, a ratio near 295.
    # 989.4 dense FP16: NVIDIA H100 architecture whitepaper; 3.35 TB/s: nvidia.com/en-us/data-center/h100
    ratio = GPUS["H100-SXM"].ops_per_byte("fp16")
    assert ratio == pytest.approx(989.4e12 / 3.35e12, rel=1e-12)
    assert round(ratio) == 295


@pytest.mark.parametrize(
    "key, dtype, tflops, tb_s, gb",
    [
        # NVIDIA A100 datasheet: FP16 tensor 312 dense (624 sparse), 2,039 GB/s, 80 GB (SXM)
        ("A100-SXM", "fp16", 312, 2.039, 80),
        # H100 SXM: 989.4 dense FP16 (whitepaper), 1,979 sparse on the product page, 3.35 TB/s, 80 GB
        ("H100-SXM", "fp16", 989.4, 3.35, 80),
        # H200 product page: 1,979 FP16 with sparsity (989.4 dense), 4.8 TB/s, 141 GB
        ("H200-SXM", "bf16", 989.4, 4.8, 141),
        # L40S datasheet: FP8 733 dense | 1,466 sparse, 864 GB/s, 48 GB
        ("L40S", "fp8", 733, 0.864, 48),
        # AMD MI300X page: FP16 1307.4 TFLOPS dense, 5.3 TB/s, 192 GB HBM3
        ("MI300X", "fp16", 1307.4, 5.3, 192),
        # NVIDIA Blackwell datasheet (4204213, Oct 2025), p. 8, HGX B200 column, per GPU: "180 GB HBM3E | 7.7 TB/s",
        # "FP16/BF16 Tensor Core 4.5 PFLOPS" and "FP8/FP6 9 PFLOPS", both with sparsity (dense is half)
        ("B200", "fp16", 2250, 7.7, 180),
        ("B200", "fp8", 4500, 7.7, 180),
        # same datasheet, HGX B200 column: "FP4 Tensor Core 18 PFLOPS" with sparsity, 9 dense
        ("B200", "fp4", 9000, 7.7, 180),
        # same datasheet, GB200 NVL72 column per GPU: FP4 20 PFLOPS sparse (10 dense), 186 GB HBM3E, 8 TB/s
        ("GB200", "fp4", 10000, 8.0, 186),
        ("GB200", "bf16", 2500, 8.0, 186),
        # NVIDIA's 'Inside NVIDIA Blackwell Ultra' post: 15 PFLOPS dense NVFP4, 288 GB of HBM3E at 8 TB/s per GPU
        ("GB300", "fp4", 15000, 8.0, 288),
        # H20: 148 TFLOPS FP16 dense, 296 INT8 (= FP8 on Hopper), 96 GB at 4.0 TB/s
        ("H20", "fp16", 148, 4.0, 96),
        ("H20", "fp8", 296, 4.0, 96),
        # H800 and GH200 (96 GB HBM3 at 4 TB/s): the H100 SXM5's Hopper GPU
        ("H800-SXM", "fp8", 1978.9, 3.35, 80),
        ("GH200", "fp16", 989.4, 4.0, 96),
        # MI325X: FP16 1,307.4 and FP8 2,614.9 TFLOPS dense, 256 GB at 6 TB/s
        ("MI325X", "fp8", 2614.9, 6.0, 256),
        # MI355X: 8,192 FP8 FLOPs per clock per CU (ISSCC) x 256 CUs x 2.4 GHz; FP4 twice that; 288 GB at 8 TB/s
        ("MI355X", "fp8", round(8192 * 256 * 2.4e9 / 1e12, 1), 8.0, 288),
        ("MI355X", "fp4", round(2 * 8192 * 256 * 2.4e9 / 1e12, 1), 8.0, 288),
        # RTX PRO 6000 Blackwell: "4,000 AI TOPS" (FP4, sparse): 2,000 dense; 96 GB GDDR7 at 1,792 GB/s
        ("RTX-PRO-6000", "fp4", 2000, 1.792, 96),
    ],
)
def test_catalog_matches_the_datasheets(key, dtype, tflops, tb_s, gb):
    gpu = GPUS[key]
    assert gpu.tflops(dtype) == pytest.approx(tflops)
    assert gpu.bandwidth_tb_s == pytest.approx(tb_s)
    assert gpu.memory_gb == pytest.approx(gb)


def test_catalog_has_the_required_gpus_with_dense_fp16_bf16_and_fp8():
    for key in REQUIRED:
        gpu = GPUS[key]
        assert gpu.peak_flops("fp16") > 0 and gpu.peak_flops("bf16") > 0
        if key != "A100-SXM":  # Ampere has no FP8 tensor cores
            assert gpu.peak_flops("fp8") > gpu.peak_flops("fp16")


def test_every_number_in_the_data_file_has_a_source_url():
    def walk(node, path):
        if isinstance(node, dict):
            if "value" in node:
                assert isinstance(node["value"], (int, float)) and node["value"] > 0, path
                assert str(node.get("source", "")).startswith("https://"), f"{path} has no source URL"
                return 1
            return sum(walk(v, f"{path}.{k}") for k, v in node.items())
        assert not isinstance(node, (int, float)) or isinstance(node, bool), f"bare number at {path}"
        return 0

    assert walk(raw_catalog()["gpus"], "gpus") >= len(REQUIRED) * 5
    for gpu in GPUS.values():
        assert {"memory", "bandwidth", "dense_fp16"} <= set(gpu.sources)


def test_peaks_are_dense_and_sparse_figures_are_flagged_apart():
    # 2:4 structured sparsity doubles the datasheet peak, so a stored dense figure must be half the sparse one.
    # (If a sparse number had slipped into `tflops`, the ratio would be 1 and this would fail.)
    # 3 %: the L40S datasheet itself prints 362.05 dense next to 733 sparse, a ratio of 2.02.
    for gpu in GPUS.values():
        for dtype, sparse in gpu.sparse_flops.items():
            assert sparse / gpu.dense_flops[dtype] == pytest.approx(2, rel=0.03), (gpu.key, dtype)
    assert "sparse_tflops" in raw_catalog()["gpus"]["H100-SXM"]
    assert sum(bool(g.sparse_flops) for g in GPUS.values()) >= 12


def test_fp4_where_the_vendor_publishes_it_and_a_reason_where_not():
    with_fp4 = {k for k, g in GPUS.items() if "fp4" in g.dense_flops}
    assert with_fp4 == {"B200", "GB200", "GB300", "MI355X", "RTX-PRO-6000"}
    for key in set(GPUS) - with_fp4:
        with pytest.raises(ValueError, match=f"{key} has no FP4 tensor throughput .*(no FP4|CDNA 3)"):
            GPUS[key].peak_flops("fp4")
    # FP4 doubles FP8 on every Blackwell and CDNA 4 part but Blackwell Ultra, which raised it to 3x
    for key in with_fp4 - {"GB300"}:
        assert GPUS[key].peak_flops("fp4") == pytest.approx(2 * GPUS[key].peak_flops("fp8"), rel=1e-3)
    assert GPUS["GB300"].peak_flops("fp4") == 3 * GPUS["GB300"].peak_flops("fp8")
    # the H20 trades compute for bandwidth: the lowest ops:byte in the catalog, 148 / 4.0 = 37
    assert min(GPUS.values(), key=lambda g: g.ops_per_byte("fp16")).key == "H20"
    assert GPUS["H20"].ops_per_byte("fp16") == pytest.approx(37)


def test_missing_dtype_is_a_clear_error():
    with pytest.raises(ValueError, match="A100-SXM has no FP8"):
        GPUS["A100-SXM"].ops_per_byte("fp8")
    with pytest.raises(ValueError, match="dtype must be one of"):
        GPUS["H100-SXM"].ops_per_byte("fp12")
    with pytest.raises(TypeError, match="dtype"):
        GPUS["H100-SXM"].ops_per_byte(16)


def test_get_gpu_accepts_keys_in_any_case_and_names_the_choices():
    assert get_gpu("h100-sxm") is GPUS["H100-SXM"]
    assert get_gpu(GPUS["L4"]) is GPUS["L4"]
    with pytest.raises(ValueError, match="H100-SXM"):
        get_gpu("H1000")
    with pytest.raises(TypeError, match="gpu"):
        get_gpu(3)


def test_custom_gpu_is_two_numbers():
    gpu = custom_gpu(500, 2.0)
    assert gpu.ops_per_byte("fp16") == pytest.approx(250)
    assert gpu.ops_per_byte("bf16") == pytest.approx(250)  # 16-bit formats share a rate
    with pytest.raises(ValueError, match="no FP8"):
        gpu.ops_per_byte("fp8")
    assert custom_gpu(1000, 4, dtype="fp8").ops_per_byte("fp8") == pytest.approx(250)
    for bad in (0, -1, math.nan, math.inf):
        with pytest.raises(ValueError, match="tflops"):
            custom_gpu(bad, 1)
        with pytest.raises(ValueError, match="bandwidth_tb_s"):
            custom_gpu(1, bad)
    with pytest.raises(TypeError, match="tflops"):
        custom_gpu("fast", 1)


def test_ops_per_byte_calculator_shows_the_library_values():
    out = calculators.compute("ops_per_byte")
    assert out["ratio"] == "295 operations per byte"  # format.plain: 3 significant digits
    out = calculators.compute("ops_per_byte", {"gpu": "custom", "custom_tflops": "500", "custom_tb_s": "2"})
    assert out["ratio"] == "250 operations per byte"
    out = calculators.compute("ops_per_byte", {"gpu": "MI300X", "dtype": "fp8"})
    assert out["ratio"] == f"{round(GPUS['MI300X'].ops_per_byte('fp8')):,} operations per byte"
    bad = json.loads(calculators.compute_json("ops_per_byte", json.dumps({"gpu": "A100-SXM", "dtype": "fp8"})))
    assert bad["ok"] is False and "FP8" in bad["message"]


def test_core_modules_import_with_numpy_alone():
    code = (
        "import sys; import chapter2.hardware, chapter2.roofline, chapter2.diffusion, chapter2.calculators; "
        "bad = {'torch', 'matplotlib', 'scipy', 'triton', 'transformers'} & set(sys.modules); "
        "assert not bad, bad"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_b200_figures_come_from_one_document_and_the_others_are_kept_apart():
    # Its bandwidth and FLOP/s used to come from two NVIDIA pages (DGX B200: 64 TB/s over 8 GPUs; HGX: FLOP/s).
    # A ratio of two numbers needs both from one source: the HGX B200 column of the Blackwell datasheet.
    b200 = GPUS["B200"]
    assert len(set(b200.sources.values())) == 1
    assert b200.ops_per_byte("fp16") == pytest.approx(2250 / 7.7)
    # the DGX B200 page (https://www.nvidia.com/en-us/data-center/dgx-b200/): 64 TB/s for 8 GPUs, kept, not used
    value, source = b200.other_figures["bandwidth_tb_s"]
    assert value == 64 / 8 and source == "https://www.nvidia.com/en-us/data-center/dgx-b200/"
    assert value * 1e12 != b200.bandwidth and "one document" in b200.note
    raw = raw_catalog()["gpus"]["B200"]["other_figures"]
    assert all(item["source"].startswith("https://") and item.get("note") for item in raw.values())


# ---------------------------------------------------------------- the memory hierarchy inside the chip (section 2.5)

KIB, MIB = 1024, 1024**2


@pytest.mark.parametrize(
    "key, sms, shared_kib, l2_mib",
    [
        # A100: 108 SMs and a 40 MB L2 (NVIDIA A100 Tensor Core GPU Architecture whitepaper); shared memory
        # "0, 8, 16, 32, 64, 100, 132 or 164 KB per SM" (Ampere tuning guide)
        ("A100-SXM", 108, 164, 40),
        # H100 SXM5: 132 SMs, 50 MB L2 (H100 architecture whitepaper, comparison table); shared memory up to
        # 228 KB per SM (Hopper tuning guide)
        ("H100-SXM", 132, 228, 50),
        # H200: compute capability 9.0, 228 KB per SM (CUDA C++ Programming Guide); no published SM count or L2
        ("H200-SXM", None, 228, None),
        # Ada (L4, L40S): "0, 8, 16, 32, 64 or 100 KB per SM" (Ada tuning guide); no published SM count or L2
        ("L4", None, 100, None),
        ("L40S", None, 100, None),
        # MI300X: 304 CUs, 64 KiB LDS per CU, 32 MiB L2 (4 per XCD) and 256 MiB L3 (ROCm GPU specifications)
        ("MI300X", 304, 64, 32),
        # B200: the Blackwell datasheet the catalog uses gives no on-chip sizes
        ("B200", None, None, None),
        # MI325X: 304 CUs, 64 KiB LDS, 32 MiB L2; MI355X: 256 CUs, 160 KiB LDS, 32 MiB L2 (ROCm GPU specifications)
        ("MI325X", 304, 64, 32),
        ("MI355X", 256, 160, 32),
        # H20: 78 SMs (Geekbench listing), 60 MB L2; RTX PRO 6000: 188 SMs, 128 MB L2
        ("H20", 78, 228, 60),
        ("RTX-PRO-6000", 188, None, 128),
    ],
)
def test_on_chip_memory_matches_the_published_figures(key, sms, shared_kib, l2_mib):
    chip = GPUS[key].on_chip
    assert chip.sms == sms
    assert chip.shared_memory_per_sm == (None if shared_kib is None else shared_kib * KIB)  # binary KB (233,472 B)
    assert chip.l2_bytes == (None if l2_mib is None else l2_mib * MIB)


def test_on_chip_totals_and_the_flashattention_estimate():
    h100 = GPUS["H100-SXM"].on_chip
    assert h100.shared_memory_total == 132 * 228 * 1024 == 30_818_304  # all SMs together: about 30.8 MB
    assert GPUS["MI300X"].on_chip.l3_bytes == 256 * MIB
    # FlashAttention paper (arXiv:2205.14135, section 2.1): the A100's on-chip SRAM bandwidth "estimated around
    # 19TB/s"; FlashAttention-3 (arXiv:2407.08608, Table 1) the H100 SXM5's: SMEM 31 TB/s per GPU, L2 12 TB/s.
    # Vendors publish none, so these two papers' estimates are the only on-chip bandwidths in the catalog
    assert GPUS["A100-SXM"].on_chip.sram_bandwidth == 19e12
    assert GPUS["H100-SXM"].on_chip.sram_bandwidth == 31e12 and h100.l2_bandwidth == 12e12
    assert [g.key for g in GPUS.values() if g.on_chip.sram_bandwidth is not None] == ["A100-SXM", "H100-SXM"]
    assert [g.key for g in GPUS.values() if g.on_chip.l2_bandwidth is not None] == ["H100-SXM"]
    assert GPUS["A100-SXM"].on_chip.sources["sram_bandwidth_tb_s"] == "https://arxiv.org/abs/2205.14135"
    assert h100.sources["sram_bandwidth_tb_s"] == h100.sources["l2_bandwidth_tb_s"] == "https://arxiv.org/abs/2407.08608"


def test_h100_register_file():
    # Hopper tuning guide, Occupancy: "The register file size is 64K 32-bit registers per SM" (FlashAttention-3,
    # Table 1: RMEM 256 KiB per SM); 132 SMs hold 132 x 256 KiB = 33 MiB of registers, more than their shared memory
    h100 = GPUS["H100-SXM"].on_chip
    assert h100.registers_per_sm == 65_536 * 4 == 256 * 1024
    assert h100.registers_total == 132 * 262_144 == 34_603_008 > h100.shared_memory_total
    assert h100.sources["registers_per_sm_kib"] == "https://docs.nvidia.com/cuda/hopper-tuning-guide/index.html"
    assert [g.key for g in GPUS.values() if g.on_chip.registers_per_sm is not None] == ["H100-SXM"]


def test_every_on_chip_figure_is_sourced_or_says_why_it_is_missing():
    raw = raw_catalog()["gpus"]
    for key, gpu in GPUS.items():
        chip = gpu.on_chip
        for name in ("sms", "shared_memory_per_sm_kib", "l2_cache_mib", "sram_bandwidth_tb_s"):
            present = name in chip.sources
            missing = name in chip.not_published
            assert present != missing, f"{key}.on_chip.{name}: give it with a source or say why it is missing"
            if present:
                assert raw[key]["on_chip"][name]["source"].startswith("https://")
            else:
                assert chip.not_published[name].strip()


def test_on_chip_records_reject_unknown_or_contradictory_figures():
    from chapter2.hardware import _on_chip

    def sourced(path, item):
        return float(item["value"]), item["source"]

    with pytest.raises(ValueError, match="unknown figures"):
        _on_chip("X", {"smem": {"value": 1, "source": "https://x"}}, sourced)
    with pytest.raises(ValueError, match="not published"):
        _on_chip("X", {"sms": {"value": 1, "source": "https://x"}, "not_published": {"sms": "no"}}, sourced)


# ------------------------------------------------------------------ the exponential rate (attention's third roof)


def test_h100_exponential_rate_is_the_flashattention3_papers_3_9_t():
    # FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608, section 3.1): "the H100 SXM5 GPU has 989 TFLOPS of FP16
    # matmul but only 3.9 TFLOPS of special functions". Derived here independently: the CUDA guide's 16 exp2 per clock
    # per SM (compute capability 9.0) x 132 SMs x 1.83 GHz.
    h100 = GPUS["H100-SXM"]
    assert h100.exponentials.method == "SMs x clock"
    assert h100.exp_rate() == pytest.approx(132 * 16 * 1.83e9, rel=1e-12)
    assert round(h100.exp_rate() / 1e12, 1) == 3.9


def test_a100_rate_from_its_clock_agrees_with_the_rate_from_its_tensor_peak():
    # two documents: the A100 whitepaper's 108 SMs x 1,410 MHz, and the datasheet's 312 TFLOP/s over the whitepaper's
    # 2,048 dense FP16 FLOP per clock per SM; either way 16 exp2 per clock per SM (CUDA guide, compute capability 8.0)
    a100 = GPUS["A100-SXM"]
    by_clock = 108 * 1.41e9 * 16
    by_peak = 312e12 / 2048 * 16
    assert a100.exp_rate() == pytest.approx(by_clock, rel=1e-12)
    assert by_peak == pytest.approx(by_clock, rel=1e-3)


def test_hopper_parts_without_a_published_clock_take_the_h100s_rate_from_their_tensor_peak():
    # the H200, H800 and GH200 carry the H100 SXM5's tensor peak (989.4 TFLOP/s); 989.4e12 / 4096 x 16 = 3.865e12
    for key in ("H200-SXM", "H800-SXM", "GH200"):
        g = GPUS[key]
        assert g.exponentials.method == "tensor peak", key
        assert g.exp_rate() == pytest.approx(989.4e12 / 4096 * 16, rel=1e-12)
        assert g.exp_rate() == pytest.approx(GPUS["H100-SXM"].exp_rate(), rel=1e-3)


def test_blackwell_rates_are_nvidias_and_a_measurement_stays_below_each():
    # NVIDIA: 5 TeraExponentials/s for Blackwell, 10.7 for Blackwell Ultra; its own MUFU.EX2 micro-benchmark measured
    # 4,943 G/s on GB200 and 10,024 G/s on GB300: each within 10 % below the published rate
    for key, published, measured in (("B200", 5e12, 4.943e12), ("GB200", 5e12, 4.943e12),
                                     ("GB300", 10.7e12, 10.024e12)):
        e = GPUS[key].exponentials
        assert e.method == "published" and e.per_s == pytest.approx(published, rel=1e-12)
        assert e.measured_per_s == pytest.approx(measured, rel=1e-12)
        assert 0.9 * e.per_s <= e.measured_per_s <= e.per_s


def test_blackwell_ultra_doubles_blackwells_exponentials_but_not_its_fp16_matmuls():
    # the reason FA4 emulates part of the exponentials: B200's FP16 matmuls are 2.27x the H100's, its exponentials 1.29x
    b200, h100, gb300 = GPUS["B200"], GPUS["H100-SXM"], GPUS["GB300"]
    assert b200.peak_flops("fp16") / h100.peak_flops("fp16") == pytest.approx(2250 / 989.4)
    assert b200.exp_rate() / h100.exp_rate() == pytest.approx(5e12 / (132 * 16 * 1.83e9))
    assert gb300.exp_rate() / GPUS["GB200"].exp_rate() == pytest.approx(2.14)


def test_every_gpu_has_an_exponential_rate_or_says_why_not():
    raw = raw_catalog()
    derived = {k for k, g in GPUS.items() if g.exponentials.per_s is not None}
    assert derived == {"A100-SXM", "H100-SXM", "H200-SXM", "H800-SXM", "GH200", "B200", "GB200", "GB300"}
    for key, gpu in GPUS.items():
        e = gpu.exponentials
        assert (e.per_s is None) == bool(e.not_derived), key
        if e.per_s is None:
            with pytest.raises(ValueError, match=key):
                gpu.exp_rate()
        assert "exponentials" in raw["gpus"][key]
    assert custom_gpu(100, 1).exponentials.per_s is None
    for arch in raw["architectures"].values():
        if isinstance(arch, dict):
            for item in (arch["ex2_per_clock_per_sm"], arch["dense_fp16_flops_per_clock_per_sm"]):
                assert item["source"].startswith("https://") and item["note"]
    guide = raw["architectures"]["hopper"]["ex2_per_clock_per_sm"]
    assert guide["source"].startswith("https://docs.nvidia.com/cuda/cuda-c-programming-guide")
    assert "Throughput of Native Arithmetic Instructions" in guide["note"]


def test_exponential_records_are_checked():
    from chapter2.hardware import _exponentials

    def sourced(path, item):
        return float(item["value"]), item["source"]

    with pytest.raises(ValueError, match="needs an 'exponentials' record"):
        _exponentials("X", None, sourced, 132, 989.4e12)
    with pytest.raises(ValueError, match="exactly one"):
        _exponentials("X", {"architecture": "hopper", "not_derived": "no"}, sourced, 132, 989.4e12)
    with pytest.raises(ValueError, match="known: ampere, hopper"):
        _exponentials("X", {"architecture": "volta"}, sourced, 132, 989.4e12)
    with pytest.raises(ValueError, match="no SM count"):
        _exponentials("X", {"architecture": "hopper", "boost_clock_mhz": {"value": 1830, "source": "https://x"}},
                      sourced, None, 989.4e12)
    with pytest.raises(ValueError, match="must say why"):
        _exponentials("X", {"not_derived": " "}, sourced, None, None)


def test_the_h100_clock_is_the_one_its_whitepaper_peak_implies():
    """issue 32 item 5 (primary sources): the H100's clock is cited to NVIDIA's Hopper whitepaper, whose dense FP16
    peak 989.4 TFLOP/s over 132 SMs x 4,096 FLOP per clock per SM gives 989.4e12 / 540,672 = 1.8299 GHz."""
    from chapter2.hardware import GPUS as CATALOG

    h100 = CATALOG["H100-SXM"]
    assert h100.exponentials.sources["boost_clock"].startswith("https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper")
    assert h100.exponentials.clock_hz == pytest.approx(989.4e12 / (132 * 4096), rel=1e-3)


def test_the_amd_peaks_and_the_gh200_memory_cite_their_vendor():
    """issue 32 item 5 (primary sources): the MI325X's memory, bandwidth and dense peaks are AMD's CDNA 3 white paper's
    endnotes (MI325-001A: 256 GB, 6 TB/s; MI325-019: 1,307.4 FP16/BF16, 2,614.9 FP8); the MI355X's dense peaks are
    AMD's ROCm blog table (Matrix FP16 2.5 PF, FP8 5 PF, FP4 10 PF), whose rounding the catalog's values meet.
    The GH200's 96 GB is NVIDIA's Grace Hopper post's."""
    from chapter2.hardware import GPUS as CATALOG

    mi325, mi355 = CATALOG["MI325X"], CATALOG["MI355X"]
    for figure in ("memory", "bandwidth", "dense_fp16", "dense_bf16", "dense_fp8"):
        assert mi325.sources[figure].startswith("https://www.amd.com/"), figure
    assert CATALOG["GH200"].sources["memory"].startswith("https://developer.nvidia.com/")  # 96 GB of HBM3
    for figure, pflops in (("dense_fp16", 2.5), ("dense_bf16", 2.5), ("dense_fp8", 5), ("dense_fp4", 10)):
        assert mi355.sources[figure].startswith("https://rocm.blogs.amd.com/"), figure
        assert round(mi355.tflops(figure.removeprefix("dense_")) / 1000, 1 if pflops < 5 else 0) == pflops, figure
