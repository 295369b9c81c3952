#!/usr/bin/python3
"""cua's order form (GTK 3), for the replay mutation suite (tests/replay_mutations.rs):
an item and a quantity, a "Gift wrap" check box, Add and Clear, the order's lines and a
"Total" label. Every event it receives and every change of the order is journaled (JSON
lines), so a test reads the app's true end state from the app itself.

Usage: order_gtk3.py [--journal PATH] [--variant NAME]

A variant is a changed build (see VARIANTS): cosmetic ones a replay must heal and say
how; breaking ones it must fail, naming the element.
"""
import argparse
import json
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

VARIANTS = {
    # cosmetic
    "": "the recorded build",
    "relabel_add": 'Add reads "Add item"',
    "case_add": 'Add reads "ADD", with a mnemonic',
    "reorder": "Clear comes before Add; Gift wrap below the buttons",
    "section": "a Customer section with a Coupon entry above the form",
    "large": "a 1.5x window and a 15 pt font",
    "dark": "the dark theme",
    "tooltips": "every control has a tool tip",
    "relabel_gift": 'Gift wrap reads "Gift wrap (free)"',
    # breaking
    "subtract": "Add subtracts the quantity from the total",
    "double": "Add adds the line twice",
    "wrong_name": "Add adds the line under the wrong item name",
    "no_add": "there is no Add button",
    "disabled_add": "Add is disabled",
    "refuse_qty": "the quantity field takes no input",
    "duplicate_add": "a second Add button just before the first",
}

args = argparse.ArgumentParser()
args.add_argument("--journal")
args.add_argument("--variant", default="", choices=sorted(VARIANTS))
OPTS = args.parse_args()
VARIANT = OPTS.variant


def log(event, **fields):
    if not OPTS.journal:
        return
    fields.update(event=event, t=round(time.time(), 3))
    with open(OPTS.journal, "a", encoding="utf-8") as f:
        f.write(json.dumps(fields, ensure_ascii=False) + "\n")


def named(widget, name):
    widget.get_accessible().set_name(name)
    return widget


class Order(Gtk.Window):
    def __init__(self):
        super().__init__(title="cua order form")
        scale = 1.5 if VARIANT == "large" else 1
        self.set_default_size(int(380 * scale), int(460 * scale))
        self.lines = []
        self.total = 0
        if VARIANT == "dark":
            Gtk.Settings.get_default().set_property("gtk-application-prefer-dark-theme", True)
        if VARIANT == "large":
            css = Gtk.CssProvider()
            css.load_from_data(b"* { font-size: 15pt; }")
            Gtk.StyleContext.add_provider_for_screen(
                self.get_screen(), css, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION
            )

        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8, margin=12)
        self.add(box)
        if VARIANT == "section":
            customer = named(Gtk.Frame(label="Customer"), "Customer")
            coupon = named(Gtk.Entry(placeholder_text="Coupon"), "Coupon")
            customer.add(coupon)
            box.pack_start(customer, False, False, 0)

        form = named(Gtk.Grid(row_spacing=8, column_spacing=8), "Order")
        box.pack_start(form, False, False, 0)
        form.attach(Gtk.Label(label="Item", xalign=0), 0, 0, 1, 1)
        self.item = named(Gtk.Entry(), "Item")
        self.item.connect("changed", lambda e: log("changed", widget="Item", text=e.get_text()))
        form.attach(self.item, 1, 0, 1, 1)
        form.attach(Gtk.Label(label="Quantity", xalign=0), 0, 1, 1, 1)
        self.quantity = named(Gtk.Entry(), "Quantity")
        self.quantity.set_editable(VARIANT != "refuse_qty")
        self.quantity.connect(
            "changed", lambda e: log("changed", widget="Quantity", text=e.get_text())
        )
        form.attach(self.quantity, 1, 1, 1, 1)

        self.gift = Gtk.CheckButton(
            label="Gift wrap (free)" if VARIANT == "relabel_gift" else "Gift wrap"
        )
        self.gift.connect(
            "toggled", lambda b: log("toggled", widget="Gift wrap", active=b.get_active())
        )

        buttons = Gtk.Box(spacing=8)
        add_label = {"relabel_add": "Add item", "case_add": "_ADD"}.get(VARIANT, "Add")
        add = Gtk.Button(label=add_label, use_underline=VARIANT == "case_add")
        add.connect("clicked", self.on_add)
        add.set_sensitive(VARIANT != "disabled_add")
        clear = Gtk.Button(label="Clear")
        clear.connect("clicked", self.on_clear)
        order = [clear, add] if VARIANT == "reorder" else [add, clear]
        if VARIANT == "no_add":
            order = [clear]
        if VARIANT == "duplicate_add":
            sample = Gtk.Button(label="Add")
            sample.connect("clicked", self.on_add_sample)
            order = [sample] + order
        for b in order:
            buttons.pack_start(b, False, False, 0)
        if VARIANT == "reorder":
            form.attach(buttons, 0, 2, 2, 1)
            form.attach(self.gift, 0, 3, 2, 1)
        else:
            form.attach(self.gift, 0, 2, 2, 1)
            form.attach(buttons, 0, 3, 2, 1)

        self.list = named(Gtk.ListBox(), "Lines")
        box.pack_start(self.list, True, True, 0)
        self.total_label = Gtk.Label(label="Total: 0", xalign=0)
        box.pack_start(self.total_label, False, False, 0)

        if VARIANT == "tooltips":
            for widget, tip in [
                (self.item, "What to order"),
                (self.quantity, "How many"),
                (self.gift, "Wrap it"),
                (add, "Add the line"),
                (clear, "Start again"),
            ]:
                widget.set_tooltip_text(tip)
        self.connect("destroy", self.on_quit)

    def on_add(self, _button):
        log("clicked", widget="Add")
        name = self.item.get_text()
        try:
            quantity = int(self.quantity.get_text())
        except ValueError:
            quantity = 0
        if VARIANT == "wrong_name":
            name = "item"
        line = f"{quantity} × {name}" + (" (gift)" if self.gift.get_active() else "")
        times = 2 if VARIANT == "double" else 1
        for _ in range(times):
            self.add_line(line, -quantity if VARIANT == "subtract" else quantity)

    def on_add_sample(self, _button):
        log("clicked", widget="Add (sample)")
        self.add_line("1 × sample", 1)

    def add_line(self, line, amount):
        self.lines.append(line)
        self.total += amount
        row = Gtk.ListBoxRow()
        row.add(Gtk.Label(label=line, xalign=0))
        named(row, line)
        row.show_all()
        self.list.add(row)
        self.show_total()

    def on_clear(self, _button):
        log("clicked", widget="Clear")
        self.lines = []
        self.total = 0
        for row in self.list.get_children():
            self.list.remove(row)
        self.show_total()

    def show_total(self):
        self.total_label.set_text(f"Total: {self.total}")
        log("order", lines=self.lines, total=self.total)

    def on_quit(self, _window):
        log("quit", lines=self.lines, total=self.total)
        Gtk.main_quit()


def main():
    log("started", variant=VARIANT, toolkit="gtk3")
    window = Order()
    window.show_all()
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
