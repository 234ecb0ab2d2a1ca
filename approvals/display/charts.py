"""Bar charts drawn by the console itself: SVG markup built on the server, so nothing is fetched or run.

Every label is escaped text; colours come from the stylesheet by class (`.chart .s0`, `.s1`), since
the pages' Content-Security-Policy allows no inline style.
"""

import os
from collections.abc import Callable
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

WIDTH = 480
LABEL_WIDTH = 170
VALUE_WIDTH = 64
BAR_HEIGHT = 14
GAP = 8
LEGEND_HEIGHT = 22
LABEL_CHARS = 22
COLUMNS_HEIGHT = 120
SEPARATORS = "_-. /:"


def number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def duration(seconds: float) -> str:
    """A wait in the unit that fits it: 850 ms, 12.4 s, 3.2 min, 1.5 h."""
    seconds = float(seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    for size, unit in ((3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def short_labels(labels: list[str], chars: int = LABEL_CHARS) -> list[str]:
    """Labels that fit `chars`, keeping what tells them apart: a start they all share gives way first, then the
    start of the rest, since names of one server's tools differ at their ends."""
    common = os.path.commonprefix(labels) if len(labels) > 1 else ""
    # Cut at a word's start, so what is left reads as words: render_chart, not hart.
    shared = max(common.rfind(mark) for mark in SEPARATORS) + 1
    shortened = []
    for text in labels:
        rest = text[shared:] if shared and len(text) > chars else text
        rest = ("…" + rest) if rest is not text else rest
        shortened.append(rest if len(rest) <= chars else "…" + rest[-(chars - 1) :])
    return shortened


@dataclass(frozen=True)
class Chart:
    title: str
    svg: SafeString


def bar_chart(
    title: str,
    labels: list[str],
    series: list[tuple[str, list[float]]],
    value_text: Callable[[float], str] = number,
    colours: list[str] | None = None,
) -> Chart:
    """Horizontal bars, one group per label and one bar per series in it, scaled to the largest value.

    `colours` gives each label's bars a class of their own (an outcome's colour) in place of the series' class.
    """
    legend = len(series) > 1
    group = BAR_HEIGHT * len(series) + GAP
    top = LEGEND_HEIGHT if legend else 0
    height = top + group * max(1, len(labels))
    largest = max((value for _, values in series for value in values), default=0) or 1
    span = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    parts = []
    if legend:
        parts.append(
            format_html_join(
                "",
                '<rect class="s{}" x="{}" y="4" width="12" height="12"/><text x="{}" y="14">{}</text>',
                (
                    (index, LABEL_WIDTH + 90 * index, LABEL_WIDTH + 90 * index + 16, name)
                    for index, (name, _) in enumerate(series)
                ),
            )
        )
    for row, (text, short) in enumerate(zip(labels, short_labels(labels), strict=True)):
        y = top + row * group
        parts.append(
            format_html(
                '<text x="{}" y="{}" text-anchor="end"><title>{}</title>{}</text>',
                LABEL_WIDTH - 8,
                y + group / 2 + 2,
                text,
                short,
            )
        )
        for index, (name, values) in enumerate(series):
            value = values[row]
            width = max(1.0, span * value / largest) if value else 0
            bar_y = y + index * BAR_HEIGHT
            parts.append(
                format_html(
                    '<rect class="{}" x="{}" y="{}" width="{}" height="{}"><title>{}: {} {}</title></rect>'
                    '<text x="{}" y="{}">{}</text>',
                    colours[row] if colours else f"s{index}",
                    LABEL_WIDTH,
                    bar_y,
                    f"{width:.1f}",
                    BAR_HEIGHT - 2,
                    text,
                    name,
                    value_text(value),
                    f"{LABEL_WIDTH + width + 4:.1f}",
                    bar_y + BAR_HEIGHT - 3,
                    value_text(value),
                )
            )
    if not labels:
        parts.append(format_html('<text x="{}" y="16">Nothing in this period.</text>', LABEL_WIDTH))
    return drawn(title, height, parts)


def stacked_columns(title: str, labels: list[str], stacks: dict[str, list[int]]) -> Chart:
    """One column per label (a bucket of time), its stacks in the classes `outcome-<name>`, labelled sparsely."""
    left, plot = 30, COLUMNS_HEIGHT
    width = (WIDTH - left) / max(1, len(labels))
    totals = [sum(values[column] for values in stacks.values()) for column in range(len(labels))]
    largest = max(totals, default=0) or 1
    parts = [
        format_html_join(
            "",
            '<rect class="outcome-{}" x="{}" y="4" width="12" height="12"/><text x="{}" y="14">{}</text>',
            ((name, left + 90 * index, left + 90 * index + 16, name) for index, name in enumerate(stacks)),
        ),
        format_html('<text x="0" y="{}">{}</text>', LEGEND_HEIGHT + 12, largest),
    ]
    every = max(1, len(labels) // 6)
    for column, label in enumerate(labels):
        x, base = left + column * width, LEGEND_HEIGHT + plot
        for name, values in stacks.items():
            if values[column]:
                tall = plot * values[column] / largest
                base -= tall
                parts.append(
                    format_html(
                        '<rect class="outcome-{}" x="{}" y="{}" width="{}" height="{}"><title>{}: {} {}</title></rect>',
                        name,
                        f"{x:.1f}",
                        f"{base:.1f}",
                        f"{max(1.0, width - 1):.1f}",
                        f"{tall:.1f}",
                        label,
                        values[column],
                        name,
                    )
                )
        # Sparse labels, none so near the right edge that it would be cut off.
        if column % every == 0 and x < WIDTH - 40:
            parts.append(format_html('<text x="{}" y="{}">{}</text>', f"{x:.1f}", LEGEND_HEIGHT + plot + 14, label))
    return drawn(title, LEGEND_HEIGHT + plot + 20, parts)


def drawn(title: str, height: float, parts: list[str]) -> Chart:
    svg = format_html(
        '<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {} {}" width="100%" xmlns="http://www.w3.org/2000/svg">'
        "<title>{}</title>{}</svg>",
        title,
        WIDTH,
        f"{height:.0f}",
        title,
        mark_safe("".join(parts)),
    )
    return Chart(title, svg)
