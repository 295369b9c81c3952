"""The order form's model, shared by its toolkit twins (order_gtk3.py, order_gtk4.py,
order_qt.py, order_tk.py), for the replay mutation suite (tests/replay_mutations.rs): the changed builds
(VARIANTS), the command line, the journal (JSON lines, so a test reads the app's true end
state from the app itself), and what Add and Clear do to the order. A view shows the
order; the twins differ only in their widgets.

Usage of a twin: order_*.py [--journal PATH] [--variant NAME] (Qt: also --qt 5|6); the
journal and the build default to $CUA_FIXTURE_JOURNAL and $CUA_FIXTURE_VARIANT.
"""
import argparse
import json
import os
import time

VARIANTS = {
    # cosmetic: a replay must heal them and say how
    "": "the recorded build",
    "relabel_add": 'Add reads "Add item"',
    "case_add": 'Add reads "ADD", with a mnemonic',
    "reorder": "Clear comes before Add; Gift wrap below the buttons",
    "section": "a Customer section with a Coupon entry above the form",
    "large": "a 1.5x window and a 15 pt font",
    "dark": "the dark theme",
    "tooltips": "every control has a tool tip",
    "relabel_gift": 'Gift wrap reads "Gift wrap (free)"',
    "slow_add": "Add shows its line 1.5 s after the click (the journal has it at once)",
    "moved_down": "the whole form 60 px lower (Tk: apps without a tree heal by image)",
    # for pixel turns and look-alikes (tests/replay_guard.rs)
    "relabel_move": 'Add reads "Add item" and comes after Clear',
    "add_after_clear": "a second Add button after Clear",
    # breaking: a replay must fail them, naming the element
    "subtract": "Add subtracts the quantity from the total",
    "double": "Add adds the line twice",
    "wrong_name": "Add adds the line under the wrong item name",
    "no_add": "there is no Add button",
    "disabled_add": "Add is disabled",
    "refuse_qty": "the quantity field takes no input",
    "duplicate_add": "a second Add button just before the first",
    "inert_gift": "Gift wrap looks the same and ignores clicks (Tk: a change only pixels show)",
}

TOOL_TIPS = {
    "Item": "What to order",
    "Quantity": "How many",
    "Gift wrap": "Wrap it",
    "Add": "Add the line",
    "Clear": "Start again",
}


def options(extra=None):
    """The command line: --journal, --variant, and a twin's own arguments."""
    # A scenario's app takes both from its environment (harness/order-*.toml).
    parser = argparse.ArgumentParser()
    parser.add_argument("--journal", default=os.environ.get("CUA_FIXTURE_JOURNAL"))
    parser.add_argument("--variant", default=os.environ.get("CUA_FIXTURE_VARIANT", ""), choices=sorted(VARIANTS))
    if extra:
        extra(parser)
    return parser.parse_args()


def labels(variant):
    """The labels of Add and Gift wrap in this build (a mnemonic marked with `mark`)."""
    add = {"relabel_add": "Add item", "relabel_move": "Add item", "case_add": "{m}ADD"}.get(variant, "Add")
    gift = "Gift wrap (free)" if variant == "relabel_gift" else "Gift wrap"
    return add, gift


def button_order(variant, add, clear, sample=None):
    """The buttons in their row, left to right."""
    if variant == "no_add":
        return [clear]
    order = [clear, add] if variant in ("reorder", "relabel_move") else [add, clear]
    if variant == "add_after_clear":
        return order + [sample]
    return [sample] + order if variant == "duplicate_add" else order


class Order:
    """The order: its lines and total, changed by Add and Clear as the build does, each
    change journaled and shown through `show(lines, total, added)`."""

    def __init__(self, journal, variant, show, defer=None):
        """`defer(ms, fn)` runs fn later on the toolkit's loop (the slow_add build)."""
        self.journal, self.variant, self.show = journal, variant, show
        self.defer = defer
        self.lines, self.total = [], 0
        self.log("started", variant=variant)

    def log(self, event, **fields):
        if not self.journal:
            return
        fields.update(event=event, t=round(time.time(), 3))
        with open(self.journal, "a", encoding="utf-8") as f:
            f.write(json.dumps(fields, ensure_ascii=False) + "\n")

    def add(self, name, quantity_text, gift):
        self.log("clicked", widget="Add")
        try:
            quantity = int(quantity_text)
        except ValueError:
            quantity = 0
        if self.variant == "wrong_name":
            name = "item"
        line = f"{quantity} × {name}" + (" (gift)" if gift else "")
        amount = -quantity if self.variant == "subtract" else quantity
        for _ in range(2 if self.variant == "double" else 1):
            self.append(line, amount)

    def add_sample(self):
        self.log("clicked", widget="Add (sample)")
        self.append("1 × sample", 1)

    def append(self, line, amount):
        self.lines.append(line)
        self.total += amount
        self.log("order", lines=self.lines, total=self.total)
        lines, total = list(self.lines), self.total
        if self.variant == "slow_add" and self.defer:
            self.defer(1500, lambda: self.show(lines, total, line))
        else:
            self.show(lines, total, line)

    def clear(self):
        self.log("clicked", widget="Clear")
        self.lines, self.total = [], 0
        self.log("order", lines=self.lines, total=self.total)
        self.show(self.lines, self.total, None)
