"""The report's charts: labels that keep what tells names apart, waits in the unit that fits, outcomes in colour."""

import re

import pytest

from approvals.display.charts import bar_chart, duration, short_labels


def test_it_keeps_the_ends_that_tell_one_servers_tools_apart():
    names = ["demo_records_render_csv_report", "demo_records_render_chart_image"]
    assert short_labels(names) == ["…csv_report", "…chart_image"]


def test_it_keeps_the_end_of_a_name_too_long_alone_and_short_names_whole():
    assert short_labels(["lookup", "records_export_customers_to_the_warehouse"]) == [
        "lookup",
        "…mers_to_the_warehouse",
    ]
    assert short_labels(["ab", "ac"]) == ["ab", "ac"]


def test_it_gives_the_full_name_on_hover():
    svg = bar_chart("t", ["demo_records_render_csv_report", "demo_records_render_chart"], [("n", [1, 2])]).svg
    assert "<title>demo_records_render_csv_report</title>…csv_report</text>" in svg


@pytest.mark.parametrize(
    "seconds, shown",
    [(0.0421, "42 ms"), (0.8, "800 ms"), (1, "1 s"), (12.44, "12.4 s"), (175.303, "2.92 min"), (5400, "1.5 h")],
)
def test_it_says_a_wait_in_the_unit_that_fits_it(seconds, shown):
    assert duration(seconds) == shown


def test_it_colours_each_outcome_its_own_way_and_writes_latency_in_its_unit():
    outcomes = bar_chart(
        "o", ["approved", "denied"], [("decisions", [3, 1])], colours=["outcome-approved", "outcome-denied"]
    )
    assert re.findall(r'<rect class="([^"]+)"', outcomes.svg) == ["outcome-approved", "outcome-denied"]
    latency = bar_chart("l", ["refund"], [("median", [0.25])], value_text=duration)
    assert ">250 ms</text>" in latency.svg and "0.25" not in latency.svg
