"""The one formatting rule: significant digits without false precision, exact integers."""

from __future__ import annotations

import math

import pytest

from chapter2 import format as fmt


@pytest.mark.parametrize("value, digits, text", [
    (295.3, 3, "295"), (4237.1, 3, "4,237"), (0.012345, 3, "0.0123"), (1.0, 3, "1"), (0.0, 3, "0"),
    (62.04, 3, "62"), (61.96, 3, "62"), (3.35, 3, "3.35"), (-0.27846, 4, "-0.2785"), (12.0, 3, "12"),
    (1365.3, 2, "1,365"), (0.5, 3, "0.5"), (989.4, 4, "989.4"), (0.00049, 2, "0.00049"),
])
def test_sig(value, digits, text):
    assert fmt.sig(value, digits) == text


def test_sig_non_finite():
    assert fmt.sig(math.inf) == "inf" and fmt.sig(-math.inf) == "-inf" and fmt.sig(math.nan) == "nan"


@pytest.mark.parametrize("value, unit, text", [
    (1.23e12, "FLOP", "1.23 TFLOP"), (16.06e9, "B", "16.1 GB"), (33_554_432, "FLOP", "33.6 MFLOP"),
    (512, "B", "512 B"), (1.5e15, "FLOP/s", "1.5 PFLOP/s"),
])
def test_si(value, unit, text):
    assert fmt.si(value, unit) == text


def test_value_types_keep_the_exact_value():
    assert fmt.Num(295.27, 3).value == 295.27 and str(fmt.Num(295.27, 3)) == "295"
    assert str(fmt.Num(3.35, 3, "TB/s")) == "3.35 TB/s"
    assert str(fmt.Int(1365)) == "1,365" and str(fmt.Int(8, "GPUs")) == "8 GPUs"
    assert str(fmt.Pct(0.4375)) == "44 %" and str(fmt.Pct(0.004)) == "0.4 %" and str(fmt.Pct(1.0)) == "100 %"
    assert str(fmt.Times(2.0)) == "2×" and str(fmt.Bytes(16.06e9)) == "16.1 GB"
    with pytest.raises(ValueError, match="whole number"):
        fmt.Int(1.5)


def test_table_markdown_and_row_check():
    t = fmt.Table(("a", "b"), (("x", 1234), ("y", fmt.Pct(0.5))))
    assert str(t).splitlines() == ["| a | b |", "|---|---:|", "| x | 1,234 |", "| y | 50 % |"]
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        fmt.Table(("a", "b"), (("x",),))


def test_show_refuses_bare_floats():
    with pytest.raises(TypeError, match="Num, Int, Pct"):
        fmt.show(0.1)
    assert fmt.show("words") == "words" and fmt.show(fmt.Int(3)) == "3"


def test_counted_says_one_in_the_singular_and_every_other_count_in_the_plural():
    from chapter2.format import counted

    assert [counted(n, "block") for n in (0, 1, 2)] == ["0 blocks", "1 block", "2 blocks"]
    assert counted(1, "K/V tile") == "1 K/V tile" and counted(4, "K/V tile") == "4 K/V tiles"
    for n, noun in [(-1, "cell"), (2.5, "cell"), (True, "cell"), ("3", "cell"), (3, ""), (3, None)]:
        with pytest.raises(TypeError, match="counted"):
            counted(n, noun)


@pytest.mark.parametrize("seconds, text", [
    (4.6e-5, "46 µs"), (0.00464, "4.64 ms"), (0.25, "250 ms"), (1.3, "1.3 s"), (119.0, "119 s"),
    (690.0, "11.5 min"), (9720.0, "2.7 h"), (1_800_000.0, "500 h"),
])
def test_duration_picks_the_unit_that_reads_well(seconds, text):
    assert fmt.duration(seconds) == text


@pytest.mark.parametrize("value, text", [
    (0.01234, "0.0123"), (0.9995, "1"), (295.34, "295"), (1365.33, "1,365"), (999.94, "1,000"), (1000.0, "1,000"),
    (123_456.7, "123,457"), (2.5e9, "2,500,000,000"), (2.5e-5, "0.000025"), (5.92e-9, "5.92 × 10⁻⁹"),
    (3e21, "3 × 10²¹"), (-1e-12, "-10⁻¹²"),
])
def test_plain_writes_numbers_as_the_pages_do_and_never_an_exponent(value, text):
    """The site's one rule (`sig`, 3 significant digits): 295.34 is "295" in a calculator as on the page; beyond
    10^15 or below 10^-6, a power of ten."""
    assert fmt.plain(value) == text


def test_decimals_share_and_billions_round_to_places_after_the_point():
    """The page helpers two sections use (once in chapter2.pages.llm_architecture, borrowed by llm_inference)."""
    assert str(fmt.decimals(16.0605, 1)) == "16.1" and str(fmt.decimals(0.12345, 3)) == "0.123"
    assert str(fmt.decimals(2.0, 2, "GB")) == "2 GB"  # trailing zeros dropped, the unit kept
    assert str(fmt.share(0.12345)) == "12.3 %" and str(fmt.share(0.5, 0)) == "50 %"
    assert str(fmt.billions(8_030_261_248)) == "8" and str(fmt.billions(235_093_634_560)) == "235.1"
    with pytest.raises(TypeError, match="places"):
        fmt.decimals(1.0, -1)
    with pytest.raises(ValueError, match="fraction"):
        fmt.share(math.nan)
