"""The refund tool: it asks a person for the amount and reason before any money moves."""

from decimal import Decimal

from approvals.demo.data import CURRENCY, Order
from approvals.demo.records import ONE_ORDER
from approvals.demo.toolkit import CallContext, choice, error, scalar, schema_problems, string, text, tool

REASONS = {
    "damaged": "Item arrived damaged",
    "late": "Delivery was late",
    "wrong_item": "Wrong item sent",
    "goodwill": "Goodwill gesture",
}
# The retry of a 2026-07-28 call carries the answer under this key.
FORM_KEY = "confirm"


def refund_form(ctx: CallContext, limit: Decimal) -> dict:
    return {
        "type": "object",
        "properties": {
            "amount": scalar(
                "number",
                f"Amount ({CURRENCY})",
                f"At most {limit} {CURRENCY}, what is still refundable on this order.",
                minimum=0.01,
                maximum=float(limit),
                default=float(limit),
            ),
            "reason": choice("Reason", "Why the customer gets money back.", REASONS, titled=ctx.titled_enums),
            "notify_customer": scalar(
                "boolean", "Email the customer", "Send the customer a refund confirmation.", default=True
            ),
            "note": string("Internal note", "Kept with the refund; never shown to the customer.", maxLength=200),
        },
        "required": ["amount", "reason"],
    }


def _describe(ctx: CallContext, order: Order, limit: Decimal) -> str:
    customer = ctx.store.customers[order.customer_id]
    return (
        f"Refund on order {order.id} of {customer.name} ({customer.id}), placed {order.placed}: "
        f"total {ctx.store.total(order)} {CURRENCY}, {limit} {CURRENCY} still refundable. "
        "Confirm the amount and the reason."
    )


@tool(
    title="Issue a refund",
    input_schema=ONE_ORDER,
    # A refund adds a record and takes nothing away, so it is not destructive; each call pays out again.
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    color=(217, 119, 6, 255),
)
async def issue_refund(ctx: CallContext, args: dict) -> dict:
    """Refund money on an order.

    A person is asked for the amount, the reason and whether to email the customer before anything is refunded;
    they may decline."""
    order = ctx.store.orders.get(args["order_id"])
    if order is None:
        return error(f"No order has id {args['order_id']}. search_orders lists the existing orders.")
    limit = ctx.store.refundable(order)
    if limit <= 0:
        return error(f"Order {order.id} is already fully refunded ({order.refunded} {CURRENCY}); nothing was done.")
    form = refund_form(ctx, limit)
    answer = await ctx.elicit(FORM_KEY, _describe(ctx, order, limit), form)
    if answer["action"] == "decline":
        return text(f"Refund not issued: the refund for order {order.id} was declined. Nothing was changed.")
    if answer["action"] == "cancel":
        return text(f"Refund not issued: the refund form for order {order.id} was dismissed. Nothing was changed.")
    content = answer.get("content") or {}
    problems = schema_problems(form, content)
    if problems:
        return error(
            f"Refund not issued: the refund form came back invalid ({'; '.join(problems)}). Nothing was changed."
        )
    refund = ctx.store.refund(
        order,
        Decimal(str(content["amount"])),
        content["reason"],
        content.get("notify_customer", True),
        content.get("note", ""),
    )
    emailed = "will be emailed a confirmation" if refund.notify_customer else "will not be emailed"
    lines = [
        f"Refund {refund.id} issued: {refund.amount} {CURRENCY} on order {order.id} ({REASONS[refund.reason]}).",
        f"The customer {emailed}.",
        f"Still refundable on this order: {ctx.store.refundable(order)} {CURRENCY}.",
    ]
    if refund.note:
        lines.append(f"Note: {refund.note}")
    ctx.log("notice", lines[0])
    return text("\n".join(lines))
