"""The in-memory records the demo tools read and change, seeded the same way on every start."""

import random
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

CURRENCY = "EUR"
CENT = Decimal("0.01")
FREE_SHIPPING_FROM = Decimal("100.00")
SHIPPING = Decimal("4.90")
VAT = {
    "DE": Decimal("0.19"),
    "FR": Decimal("0.20"),
    "NL": Decimal("0.21"),
    "IE": Decimal("0.23"),
    "ES": Decimal("0.21"),
    "IT": Decimal("0.22"),
}

PRODUCTS = {
    "KB-201": ("Mechanical keyboard", Decimal("89.00")),
    "MS-110": ("Wireless mouse", Decimal("29.50")),
    "MN-270": ("27-inch monitor", Decimal("249.00")),
    "HB-050": ("USB-C hub", Decimal("39.90")),
    "CB-010": ("USB-C cable, 2 m", Decimal("9.99")),
    "ST-300": ("Laptop stand", Decimal("44.00")),
    "WC-720": ("HD webcam", Decimal("64.00")),
    "HS-400": ("Noise-cancelling headset", Decimal("139.00")),
}

PEOPLE = [
    ("Ada Lindqvist", "DE", "gold"),
    ("Bruno Marchetti", "IT", "standard"),
    ("Chloé Durand", "FR", "silver"),
    ("Daan de Vries", "NL", "standard"),
    ("Eimear Byrne", "IE", "gold"),
    ("Felipe Ortega", "ES", "silver"),
    ("Greta Hoffmann", "DE", "standard"),
    ("Hugo Lefebvre", "FR", "standard"),
    ("Isabella Romano", "IT", "gold"),
    ("Jonas Becker", "DE", "silver"),
    ("Katrien Janssen", "NL", "standard"),
    ("Liam O'Connor", "IE", "standard"),
    ("Marta Jiménez", "ES", "gold"),
    ("Noah Schmitt", "DE", "standard"),
    ("Océane Martin", "FR", "silver"),
    ("Paolo Ricci", "IT", "standard"),
    ("Quinten Visser", "NL", "silver"),
    ("Róisín Walsh", "IE", "standard"),
    ("Sofía Navarro", "ES", "standard"),
    ("Tobias Wagner", "DE", "gold"),
]
STATUSES = ("paid", "shipped", "delivered")


def money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass
class Customer:
    id: str
    name: str
    email: str
    country: str
    tier: str
    since: date


@dataclass
class Order:
    id: str
    customer_id: str
    placed: date
    status: str
    lines: list[tuple[str, int]]
    refunded: Decimal = Decimal("0.00")


@dataclass
class Refund:
    id: str
    order_id: str
    amount: Decimal
    reason: str
    notify_customer: bool
    note: str


@dataclass
class Store:
    customers: dict[str, Customer] = field(default_factory=dict)
    orders: dict[str, Order] = field(default_factory=dict)
    refunds: list[Refund] = field(default_factory=list)

    def customer_by_email(self, email: str) -> Customer | None:
        wanted = email.strip().lower()
        return next((c for c in self.customers.values() if c.email == wanted), None)

    def orders_of(self, customer_id: str) -> list[Order]:
        return [o for o in self.orders.values() if o.customer_id == customer_id]

    def delete_customer(self, customer_id: str) -> tuple[Customer, list[Order]] | None:
        customer = self.customers.pop(customer_id, None)
        if customer is None:
            return None
        orders = self.orders_of(customer_id)
        for order in orders:
            del self.orders[order.id]
        return customer, orders

    def quote(self, order: Order) -> dict:
        subtotal, shipping, rate, tax = self._amounts(order)
        lines = [
            {
                "sku": sku,
                "description": PRODUCTS[sku][0],
                "quantity": quantity,
                "unit_price": float(PRODUCTS[sku][1]),
                "amount": float(PRODUCTS[sku][1] * quantity),
            }
            for sku, quantity in order.lines
        ]
        return {
            "order_id": order.id,
            "customer_id": order.customer_id,
            "currency": CURRENCY,
            "lines": lines,
            "subtotal": float(subtotal),
            "shipping": float(shipping),
            "tax_rate": float(rate),
            "tax": float(tax),
            "total": float(subtotal + shipping + tax),
        }

    def total(self, order: Order) -> Decimal:
        subtotal, shipping, _, tax = self._amounts(order)
        return subtotal + shipping + tax

    def _amounts(self, order: Order) -> tuple[Decimal, Decimal, Decimal, Decimal]:
        subtotal = money(sum((PRODUCTS[sku][1] * quantity for sku, quantity in order.lines), Decimal(0)))
        shipping = Decimal("0.00") if subtotal >= FREE_SHIPPING_FROM else SHIPPING
        rate = VAT[self.customers[order.customer_id].country]
        return subtotal, shipping, rate, money((subtotal + shipping) * rate)

    def refundable(self, order: Order) -> Decimal:
        return self.total(order) - order.refunded

    def refund(self, order: Order, amount: Decimal, reason: str, notify_customer: bool, note: str) -> Refund:
        refund = Refund(f"R{len(self.refunds) + 1:04d}", order.id, money(amount), reason, notify_customer, note)
        self.refunds.append(refund)
        order.refunded += refund.amount
        order.status = "refunded" if self.refundable(order) == 0 else "partially refunded"
        return refund

    def monthly(self, metric: str, year: int) -> list[float]:
        """Orders placed, or revenue in CURRENCY, for each month of `year`."""
        totals = [Decimal(0)] * 12
        for order in self.orders.values():
            if order.placed.year == year:
                totals[order.placed.month - 1] += self.total(order) if metric == "revenue" else 1
        return [float(value) for value in totals]


def email_for(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower().replace("'", "")
    first, last = ascii_name.split(" ", 1)
    return f"{first}.{last.replace(' ', '')}@example.com"


def seeded_store(seed: int = 2026) -> Store:
    """Twenty customers and their orders over 2025 and early 2026, identical for a given seed."""
    rng = random.Random(seed)
    store = Store()
    order_number = 1001
    for index, (name, country, tier) in enumerate(PEOPLE, start=1):
        customer = Customer(
            f"C{index:03d}",
            name,
            email_for(name),
            country,
            tier,
            date(2019 + index % 6, 1 + index % 12, 1 + index % 27),
        )
        store.customers[customer.id] = customer
        for _ in range(rng.randint(1, 4)):
            placed = date(rng.choice((2025, 2025, 2026)), rng.randint(1, 12), rng.randint(1, 28))
            if placed.year == 2026:
                placed = placed.replace(month=1 + placed.month % 6)
            lines = [(sku, rng.randint(1, 3)) for sku in rng.sample(sorted(PRODUCTS), rng.randint(1, 3))]
            status = STATUSES[2] if placed.year == 2025 else rng.choice(STATUSES)
            store.orders[f"O{order_number}"] = Order(f"O{order_number}", customer.id, placed, status, lines)
            order_number += 1
    return store
