"""Facts of the recall page."""

from chapter2.pages import recall


def test_review_after_a_week():
    assert recall.review_after_days().value == 7
