#!/usr/bin/python3
"""cua's order form in GTK 4 (the model and the builds: order.py, beside this file). GTK 4
shows an effect ~250 ms after the input, its check boxes offer no accessible action (a
click is a pointer click) and its entries hide their text from the accessibility tree."""
import sys

import gi

gi.require_version("Gdk", "4.0")
gi.require_version("Gtk", "4.0")
from gi.repository import Gdk, Gio, GLib, Gtk  # noqa: E402

from order import TOOL_TIPS, Order, button_order, labels, options  # noqa: E402

OPTS = options()
VARIANT = OPTS.variant


def named(widget, name):
    widget.update_property([Gtk.AccessibleProperty.LABEL], [name])
    return widget


class Window(Gtk.ApplicationWindow):
    def __init__(self, app):
        super().__init__(application=app, title="cua order form")
        self.order = Order(OPTS.journal, VARIANT, self.show_order, defer=lambda ms, f: GLib.timeout_add(ms, lambda: bool(f())))
        scale = 1.5 if VARIANT == "large" else 1
        self.set_default_size(int(380 * scale), int(460 * scale))
        if VARIANT == "dark":
            Gtk.Settings.get_default().set_property("gtk-application-prefer-dark-theme", True)
        if VARIANT == "large":
            css = Gtk.CssProvider()
            css.load_from_data(b"* { font-size: 15pt; }")
            Gtk.StyleContext.add_provider_for_display(
                Gdk.Display.get_default(), css, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION
            )

        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
        for side in ("top", "bottom", "start", "end"):
            getattr(box, f"set_margin_{side}")(12)
        self.set_child(box)
        if VARIANT == "section":
            customer = named(Gtk.Frame(label="Customer"), "Customer")
            customer.set_child(named(Gtk.Entry(placeholder_text="Coupon"), "Coupon"))
            box.append(customer)

        form = named(Gtk.Grid(row_spacing=8, column_spacing=8), "Order")
        box.append(form)
        self.item, self.quantity = named(Gtk.Entry(), "Item"), named(Gtk.Entry(), "Quantity")
        self.quantity.set_editable(VARIANT != "refuse_qty")
        for row, (entry, name) in enumerate([(self.item, "Item"), (self.quantity, "Quantity")]):
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
            buttons.append(b)
        rows = [buttons, self.gift] if VARIANT == "reorder" else [self.gift, buttons]
        for row, widget in enumerate(rows, start=2):
            form.attach(widget, 0, row, 2, 1)

        self.list = named(Gtk.ListBox(), "Lines")
        self.list.set_vexpand(True)
        box.append(self.list)
        self.total_label = Gtk.Label(label="Total: 0", xalign=0)
        box.append(self.total_label)
        if VARIANT == "tooltips":
            for widget, name in [(self.item, "Item"), (self.quantity, "Quantity"), (self.gift, "Gift wrap"), (add, "Add"), (clear, "Clear")]:
                widget.set_tooltip_text(TOOL_TIPS[name])
        self.connect("close-request", lambda _: self.order.log("quit") or False)

    def show_order(self, _lines, total, added):
        if added is None:
            self.list.remove_all()
        else:
            self.list.append(Gtk.Label(label=added, xalign=0))
        self.total_label.set_text(f"Total: {total}")


def main():
    # NON_UNIQUE: every launch is its own process.
    app = Gtk.Application(application_id="org.cua.OrderGtk4", flags=Gio.ApplicationFlags.NON_UNIQUE)
    app.connect("activate", lambda a: Window(a).present())
    return app.run([])


if __name__ == "__main__":
    GLib.set_prgname("order_gtk4")
    sys.exit(main())
