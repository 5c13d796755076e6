"""A calculator field changed the way the tests change it (the browser tests and the numbers test alike)."""

from __future__ import annotations


def changed_value(field):
    """A different valid value for one field (None if it has none): the next option of a select, text with
    " 7" added, a number a third of the way to its top."""
    if field.kind == "select":
        values = [str(v) for v, _ in field.options]
        return values[(values.index(str(field.default)) + 1) % len(values)] if len(values) > 1 else None
    if field.kind == "text":
        return str(field.default) + " 7"
    lo = field.min if field.min is not None else 0
    hi = field.max if field.max is not None else float(field.default) * 4 + 4
    value = float(field.default)
    target = value + (hi - value) / 3 if value < hi else (value + lo) / 2
    if field.step:
        target = round(round((target - lo) / field.step) * field.step + lo, 10)
    if field.integer:
        target = round(target)
    return f"{target:g}" if target != value else None
