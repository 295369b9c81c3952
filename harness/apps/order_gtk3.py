#!/usr/bin/python3
"""cua's order form in GTK 3 (the model and the builds: order.py, beside this file)."""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

from order import TOOL_TIPS, Order, button_order, labels, options  # noqa: E402

OPTS = options()
VARIANT = OPTS.variant


def named(widget, name):
    widget.get_accessible().set_name(name)
    return widget


class Window(Gtk.Window):
    def __init__(self):
        super().__init__(title="cua order form")
        self.order = Order(OPTS.journal, VARIANT, self.show_order, defer=lambda ms, f: GLib.timeout_add(ms, lambda: bool(f())))
        scale = 1.5 if VARIANT == "large" else 1
        self.set_default_size(int(380 * scale), int(460 * scale))
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
            customer.add(named(Gtk.Entry(placeholder_text="Coupon"), "Coupon"))
            box.pack_start(customer, False, False, 0)

        form = named(Gtk.Grid(row_spacing=8, column_spacing=8), "Order")
        box.pack_start(form, False, False, 0)
        self.item, self.quantity = named(Gtk.Entry(), "Item"), named(Gtk.Entry(), "Quantity")
        self.quantity.set_editable(VARIANT != "refuse_qty")
        for row, entry in enumerate([self.item, self.quantity]):
            name = entry.get_accessible().get_name()
            form.attach(Gtk.Label(label=name, xalign=0), 0, row, 1, 1)
            entry.connect("changed", lambda e, n=name: self.order.log("changed", widget=n, text=e.get_text()))
            form.attach(entry, 1, row, 1, 1)

        add_label, gift_label = labels(VARIANT)
        self.gift = Gtk.CheckButton(label=gift_label)
        self.gift.connect(
            "toggled", lambda b: self.order.log("toggled", widget="Gift wrap", active=b.get_active())
        )
        add = Gtk.Button(label=add_label.format(m="_"), use_underline=VARIANT == "case_add")
        add.connect("clicked", lambda _: self.order.add(self.item.get_text(), self.quantity.get_text(), self.gift.get_active()))
        add.set_sensitive(VARIANT != "disabled_add")
        clear = Gtk.Button(label="Clear")
        clear.connect("clicked", lambda _: self.order.clear())
        sample = Gtk.Button(label="Add")
        sample.connect("clicked", lambda _: self.order.add_sample())
        buttons = Gtk.Box(spacing=8)
        for b in button_order(VARIANT, add, clear, sample):
            buttons.pack_start(b, False, False, 0)
        rows = [buttons, self.gift] if VARIANT == "reorder" else [self.gift, buttons]
        for row, widget in enumerate(rows, start=2):
            form.attach(widget, 0, row, 2, 1)

        self.list = named(Gtk.ListBox(), "Lines")
        box.pack_start(self.list, True, True, 0)
        self.total_label = Gtk.Label(label="Total: 0", xalign=0)
        box.pack_start(self.total_label, False, False, 0)
        if VARIANT == "tooltips":
            for widget, name in [(self.item, "Item"), (self.quantity, "Quantity"), (self.gift, "Gift wrap"), (add, "Add"), (clear, "Clear")]:
                widget.set_tooltip_text(TOOL_TIPS[name])
        self.connect("destroy", lambda _: (self.order.log("quit"), Gtk.main_quit()))

    def show_order(self, _lines, total, added):
        if added is None:
            for row in self.list.get_children():
                self.list.remove(row)
        else:
            row = named(Gtk.ListBoxRow(), added)
            row.add(Gtk.Label(label=added, xalign=0))
            row.show_all()
            self.list.add(row)
        self.total_label.set_text(f"Total: {total}")


def main():
    Window().show_all()
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
