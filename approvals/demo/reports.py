"""Reporting tools: a slow export that reports progress, and a chart drawn as a PNG."""

import asyncio
import base64
import csv
import io
import math

from approvals.demo.data import CURRENCY, Store
from approvals.demo.png import bar_chart
from approvals.demo.toolkit import READ_ONLY, CallContext, arguments, scalar, string, tool

STEP_SECONDS = 0.5
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
YEARS = (2025, 2026)
BAR_COLORS = {"orders": (37, 99, 235, 255), "revenue": (22, 163, 74, 255)}


def _orders(store: Store) -> list[list]:
    rows = [["order_id", "customer_id", "placed", "status", f"total_{CURRENCY}", f"refunded_{CURRENCY}"]]
    for order in sorted(store.orders.values(), key=lambda o: o.id):
        rows.append([order.id, order.customer_id, order.placed, order.status, store.total(order), order.refunded])
    return rows


def _customers(store: Store) -> list[list]:
    rows = [["customer_id", "name", "email", "country", "tier", "since", "orders"]]
    for c in store.customers.values():
        rows.append([c.id, c.name, c.email, c.country, c.tier, c.since, len(store.orders_of(c.id))])
    return rows


def _revenue(store: Store) -> list[list]:
    rows = [["month", "orders", f"revenue_{CURRENCY}"]]
    for year in YEARS:
        counts, revenue = store.monthly("orders", year), store.monthly("revenue", year)
        rows.extend([f"{year}-{m + 1:02d}", int(counts[m]), f"{revenue[m]:.2f}"] for m in range(12) if counts[m])
    return rows


REPORTS = {"orders": _orders, "customers": _customers, "revenue": _revenue}


@tool(
    title="Export a report",
    input_schema=arguments(
        {
            "report": string("Report", "Which report to build.", enum=list(REPORTS)),
            "seconds": scalar(
                "integer", "Duration (seconds)", "How long the export takes.", minimum=1, maximum=30, default=6
            ),
        },
        ["report"],
    ),
    annotations=READ_ONLY,
    color=(124, 58, 237, 255),
)
async def export_report(ctx: CallContext, args: dict) -> dict:
    """Build a CSV report of all orders, all customers or monthly revenue.

    Slow on purpose: it takes `seconds` seconds and reports progress as it goes; cancelling the call stops it."""
    rows = REPORTS[args["report"]](ctx.store)
    steps = round(args["seconds"] / STEP_SECONDS)
    records = len(rows) - 1
    # Stands in for a slow query; a cancelled call stops at the next step, since the sleep raises.
    for step in range(1, steps + 1):
        await asyncio.sleep(STEP_SECONDS)
        ctx.progress(step, steps, f"Exported {math.ceil(records * step / steps)} of {records} rows")
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return {
        "content": [
            {"type": "text", "text": f"The {args['report']} report is ready: {records} rows of CSV follow."},
            {"type": "text", "text": buffer.getvalue()},
        ]
    }


@tool(
    title="Chart orders or revenue per month",
    input_schema=arguments(
        {
            "metric": string("Metric", "What each bar measures.", enum=list(BAR_COLORS), default="orders"),
            "year": scalar(
                "integer", "Year", "The year to chart.", minimum=YEARS[0], maximum=YEARS[-1], default=YEARS[0]
            ),
        }
    ),
    annotations=READ_ONLY,
    color=(219, 39, 119, 255),
)
async def render_chart(ctx: CallContext, args: dict) -> dict:
    """Draw a bar chart (PNG) of the orders placed, or revenue, in each month of one year."""
    metric, year = args["metric"], args["year"]
    values = ctx.store.monthly(metric, year)
    unit = "orders" if metric == "orders" else CURRENCY
    shown = ", ".join(f"{month} {value:g}" for month, value in zip(MONTHS, values, strict=True))
    png = bar_chart(values, BAR_COLORS[metric])
    return {
        "content": [
            {
                "type": "text",
                "text": f"{metric.capitalize()} per month in {year} ({unit}), January to December: {shown}.",
            },
            {
                "type": "image",
                "data": base64.b64encode(png).decode("ascii"),
                "mimeType": "image/png",
                "annotations": {"audience": ["user"]},
            },
        ]
    }


TOOLS = [export_report, render_chart]
