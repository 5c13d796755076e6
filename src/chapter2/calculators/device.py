"""Calculator of section 2.4: the reader's own device on the roofline, next to the catalog GPUs.

The button runs `chapter2.measure.measure_fields` in the reader's browser (on
request only: a few hundred milliseconds of numpy in Pyodide) and fills in the
two rates; the calculator itself is a pure function of the two numbers, so the
page's default (nothing measured) is the same on every build, and a reader can
also type rates measured elsewhere (the notebook, `chapter2.host.bench`).
"""

from __future__ import annotations

import math

from .. import charts, hardware
from ..format import plain, si, sig
from ._charts import roof
from ._gpus import TENSOR_DTYPES
from ._registry import Action, Field, Output, calculator

REFERENCE = "H100-SXM"  # the chapter's GPU, compared in words
DRAWN = ("H20", "A100-SXM", "H100-SXM", "B200", "L40S")  # roofs drawn: from the lowest ops:byte of the catalog to
# the highest, the chapter's H100 between; the catalog's other GPUs sit among them (15 roofs were one grey tangle)
CHART = charts.ChartSpec("arithmetic intensity (operations per byte)", "attainable FLOP/s", x_log=True, y_log=True,
                         height=270)


@calculator(
    "device_roofline",
    title="Your device on the roofline",
    fields=[
        Field("matmul_gflops", "This device: numpy matmul rate (GFLOP/s)", 0, min=0, max=1e7,
              help="0 = not measured; the button measures numpy in WebAssembly (one thread, no optimized BLAS); "
                   "for native numbers run python -m chapter2.measure and paste them", unit="GFLOP/s"),
        Field("copy_gb_s", "This device: memory copy rate (GB/s)", 0, min=0, max=1e5,
              help="bytes read + written per second (in the browser: WebAssembly, one thread)", unit="GB/s"),
        Field("dtype", "GPUs' data type", "fp16", kind="select", options=TENSOR_DTYPES),
    ],
    outputs=[
        Output("device", "This device"),
        Output("ratio", "Its ops:byte ratio"),
        Output("reference", f"Against an {REFERENCE}"),
        Output("chart", "This device and the catalog GPUs on one roofline", kind="chart", chart=CHART),
    ],
    action=Action("Measure this device", "chapter2.measure:measure_fields", busy="Measuring…"),
)
def device_roofline_calc(matmul_gflops, copy_gb_s, dtype):
    """Defaults: nothing measured yet, so only the GPUs are drawn."""
    flops, bandwidth = matmul_gflops * 1e9, copy_gb_s * 1e9
    measured = flops > 0 and bandwidth > 0
    gpus = [g for g in hardware.GPUS.values() if hardware.tensor_dtype(dtype) in g.dense_flops]
    ref = hardware.get_gpu(REFERENCE)
    if measured:
        ratio = flops / bandwidth
        device = (f"{si(flops, 'FLOP/s')} (numpy float32 matmul), {si(bandwidth, 'B/s')} (array copy); measured "
                  f"in the browser these are numpy in WebAssembly (one thread, no optimized BLAS), far below "
                  f"native: python -m chapter2.measure prints the native two")
        ratio_text = (f"{plain(ratio)} operations per byte = {sig(matmul_gflops, 4)} GFLOP/s / "
                      f"{sig(copy_gb_s, 4)} GB/s: a kernel needs about {sig(ratio, 2)} operations per byte "
                      f"it moves to keep this device's arithmetic busy")
        reference = (f"its dense {dtype.upper()} peak is {sig(ref.peak_flops(dtype) / flops, 3)} × this matmul "
                     f"rate and its bandwidth {sig(ref.bandwidth / bandwidth, 3)} × this copy rate; ops:byte "
                     f"{sig(ref.ops_per_byte(dtype), 3)} vs {sig(ratio, 3)}") if dtype in ref.dense_flops else "n/a"
    else:
        ratio = None
        device = "not measured yet: press “Measure this device” (a few hundred milliseconds), or type both rates"
        ratio_text = reference = "needs both rates"
    numbers = {"matmul_rate (FLOP/s)": flops, "copy_rate (B/s)": bandwidth, "ops_per_byte (FLOP/B)": ratio,
               "reference_gpu": REFERENCE, "reference_peak (FLOP/s)": float(ref.peak_flops(dtype)) if dtype in ref.dense_flops else None,
               "reference_bandwidth (B/s)": float(ref.bandwidth),
               "reference_ops_per_byte (FLOP/B)": float(ref.ops_per_byte(dtype)) if dtype in ref.dense_flops else None}
    if measured and dtype in ref.dense_flops:
        numbers.update({"reference_peak_over_matmul": ref.peak_flops(dtype) / flops,
                        "reference_bandwidth_over_copy": ref.bandwidth / bandwidth})
    return {"device": device, "ratio": ratio_text, "reference": reference,
            "chart": _chart(gpus, dtype, flops, bandwidth, ratio), "numbers": numbers}


def _chart(gpus, dtype, flops, bandwidth, ratio):
    """The roofs of a few catalog GPUs (DRAWN, those with a peak in `dtype`) and of this device once measured; the
    summary gives the range of the whole catalog's ops:byte."""
    drawn = sorted((g for g in gpus if g.key in DRAWN), key=lambda g: g.ops_per_byte(dtype))  # the legend in order
    ridges = [g.ops_per_byte(dtype) for g in gpus] + ([ratio] if ratio else [])
    lo = 10.0 ** min(-1, _decade(min(ridges)) - 1)
    hi = 10.0 ** max(4, _decade(max(ridges)) + 1)
    colours = [0, 2, 3, 4, 5]
    lines = [roof(g, dtype, lo, hi, f"{g.key}: ops:byte {sig(g.ops_per_byte(dtype), 3)}", color=colours[i % 5])
             for i, g in enumerate(drawn)]
    catalog = [g.ops_per_byte(dtype) for g in gpus]
    points = []
    if ratio:
        device = hardware.custom_gpu(flops / 1e12, bandwidth / 1e12, dtype=dtype, name="this device")
        lines.append(roof(device, dtype, lo, hi, "this device (measured)", color=1))
        points.append(charts.point(ratio, flops, f"its ops:byte {sig(ratio, 3)}", color=1, legend=True))
    return charts.chart(lines, points, summary=(
        "Each roof rises with the memory bandwidth up to the device's peak; the bend is its ops:byte ratio. "
        f"{len(drawn)} of the {len(gpus)} catalog GPUs with a {dtype.upper()} peak are drawn; the whole catalog's "
        f"ops:byte runs from {sig(min(catalog), 3)} to {sig(max(catalog), 3)} (the table on this page lists each)."
        + ("" if ratio else " This device is not measured yet.")))


def _decade(x: float) -> int:
    return math.floor(math.log10(x))
