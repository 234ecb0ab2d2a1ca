"""Tools that read, price and delete customer records."""

import json

from approvals.demo.data import CURRENCY, STATUSES, Customer, Order
from approvals.demo.toolkit import READ_ONLY, CallContext, arguments, error, scalar, string, text, tool

CUSTOMER_ID = string("Customer id", "A customer id: C followed by three digits, e.g. C007.", pattern="^C[0-9]{3}$")
ORDER_ID = string("Order id", "An order id: O followed by four digits, e.g. O1012.", pattern="^O[0-9]{4}$")
# The arguments of a tool that acts on one order.
ONE_ORDER = arguments({"order_id": ORDER_ID}, ["order_id"])
ORDER_STATUSES = [*STATUSES, "partially refunded", "refunded"]

MONEY = {"type": "number", "minimum": 0}
QUOTE_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "customer_id": {"type": "string"},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "description": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "unit_price": MONEY,
                    "amount": MONEY,
                },
                "required": ["sku", "description", "quantity", "unit_price", "amount"],
                "additionalProperties": False,
            },
        },
        "subtotal": MONEY,
        "shipping": MONEY,
        "tax_rate": {"type": "number", "minimum": 0, "maximum": 1},
        "tax": MONEY,
        "total": MONEY,
    },
    "required": ["order_id", "customer_id", "currency", "lines", "subtotal", "shipping", "tax_rate", "tax", "total"],
    "additionalProperties": False,
}


def _order_line(ctx: CallContext, order: Order) -> str:
    return f"- {order.id} placed {order.placed}, {order.status}, total {ctx.store.total(order)} {CURRENCY}"


def _profile(ctx: CallContext, customer: Customer) -> str:
    orders = sorted(ctx.store.orders_of(customer.id), key=lambda o: o.placed, reverse=True)
    lines = [
        f"Customer {customer.id}: {customer.name} <{customer.email}>",
        f"Country {customer.country}, {customer.tier} tier, customer since {customer.since}.",
        f"Orders ({len(orders)}):" if orders else "No orders.",
    ]
    return "\n".join(lines + [_order_line(ctx, order) for order in orders])


@tool(
    title="Look up a customer",
    input_schema=arguments(
        {
            "customer_id": CUSTOMER_ID,
            "email": string(
                "Email address",
                "The customer's email address, matched case-insensitively.",
                format="email",
                maxLength=254,
            ),
        }
    ),
    annotations=READ_ONLY,
    color=(37, 99, 235, 255),
)
async def lookup_customer(ctx: CallContext, args: dict) -> dict:
    """Find one customer by id or by email address and show their profile and orders. Changes nothing."""
    if ("customer_id" in args) == ("email" in args):
        return error("Give exactly one of customer_id (like C007) or email.")
    if "customer_id" in args:
        customer = ctx.store.customers.get(args["customer_id"])
        missing = f"No customer has id {args['customer_id']}"
    else:
        customer = ctx.store.customer_by_email(args["email"])
        missing = f"No customer has the email address {args['email']}"
    if customer is None:
        return error(f"{missing}. search_orders lists orders with their customer ids.")
    return text(_profile(ctx, customer))


@tool(
    title="Search orders",
    input_schema=arguments(
        {
            # Mirrored into an Mcp-Param-Order-Status header on 2026-07-28 HTTP, so proxies can route on it.
            "status": string(
                "Status", "Only orders in this status.", enum=ORDER_STATUSES, **{"x-mcp-header": "Order-Status"}
            ),
            "customer_id": CUSTOMER_ID,
            "limit": scalar("integer", "Limit", "At most this many orders.", minimum=1, maximum=50, default=10),
        }
    ),
    annotations=READ_ONLY,
    color=(14, 165, 233, 255),
)
async def search_orders(ctx: CallContext, args: dict) -> dict:
    """List orders, newest first, optionally only those of one status or one customer. Changes nothing."""
    orders = [
        order
        for order in ctx.store.orders.values()
        if order.status == args.get("status", order.status)
        and order.customer_id == args.get("customer_id", order.customer_id)
    ]
    orders.sort(key=lambda o: o.placed, reverse=True)
    shown = orders[: args["limit"]]
    if not shown:
        return text("No orders match.")
    rows = [f"{_order_line(ctx, order)} (customer {order.customer_id})" for order in shown]
    return text(f"{len(orders)} orders match, newest first; showing {len(shown)}:\n" + "\n".join(rows))


@tool(
    title="Price an order",
    input_schema=ONE_ORDER,
    output_schema=QUOTE_SCHEMA,
    annotations=READ_ONLY,
    color=(22, 163, 74, 255),
)
async def quote_order(ctx: CallContext, args: dict) -> dict:
    """Price an order line by line, with shipping and VAT for the customer's country, as structured data.

    Changes nothing."""
    order = ctx.store.orders.get(args["order_id"])
    if order is None:
        return error(f"No order has id {args['order_id']}. search_orders lists the existing orders.")
    quote = ctx.store.quote(order)
    return {"content": [{"type": "text", "text": json.dumps(quote, indent=2)}], "structuredContent": quote}


@tool(
    title="Delete a customer or an order",
    input_schema={
        **arguments(
            {
                "record_type": string("Record type", "What to delete.", enum=["customer", "order"]),
                "record_id": string(
                    "Record id",
                    "The id of the customer (C007) or order (O1012) to delete.",
                    pattern="^(C[0-9]{3}|O[0-9]{4})$",
                ),
            },
            ["record_type", "record_id"],
        ),
        # The id's shape must agree with the record type, so a model cannot delete the wrong kind of record.
        "if": {"properties": {"record_type": {"const": "customer"}}},
        "then": {"properties": {"record_id": {"pattern": "^C"}}},
        "else": {"properties": {"record_id": {"pattern": "^O"}}},
    },
    # Deleting again finds nothing and changes nothing more, hence idempotent.
    annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    color=(220, 38, 38, 255),
)
async def delete_record(ctx: CallContext, args: dict) -> dict:
    """Permanently delete one order, or one customer together with all of their orders. Cannot be undone."""
    kind, record_id = args["record_type"], args["record_id"]
    if kind == "customer":
        removed = ctx.store.delete_customer(record_id)
        if removed is None:
            return error(f"No customer has id {record_id}; nothing was deleted.")
        customer, orders = removed
        done = f"Deleted customer {customer.id} ({customer.name})"
        done += f" and their orders {', '.join(o.id for o in orders)}." if orders else ", who had no orders."
    else:
        order = ctx.store.orders.pop(record_id, None)
        if order is None:
            return error(f"No order has id {record_id}; nothing was deleted.")
        done = f"Deleted order {order.id} of customer {order.customer_id}, placed {order.placed}."
    ctx.log("warning", done)
    return text(done)


TOOLS = [lookup_customer, search_orders, quote_order, delete_record]
