"""WCAG 2.x contrast, for the tests that check a colour reads on its background (figures, tooltips)."""

from __future__ import annotations


def luminance(rgb) -> float:
    """Relative luminance of an sRGB colour, its components from 0 to 1."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b) -> float:
    """The contrast ratio of two sRGB colours (components from 0 to 1): 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
