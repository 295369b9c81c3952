#!/usr/bin/python3
"""A big GTK 4 window that does not animate, for the observe benchmark: a grid of about 230
widgets (buttons, check buttons, entries, labels), all on screen at 1920x1080."""
import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gtk  # noqa: E402


def build(app):
    window = Gtk.ApplicationWindow(application=app, title="cua big gtk4")
    window.set_default_size(1500, 900)
    grid = Gtk.Grid(column_spacing=4, row_spacing=4)
    for i in range(230):
        kind = i % 4
        if kind == 0:
            widget = Gtk.Button(label=f"Button {i}")
        elif kind == 1:
            widget = Gtk.CheckButton(label=f"Option {i}")
        elif kind == 2:
            widget = Gtk.Entry()
            widget.update_property([Gtk.AccessibleProperty.LABEL], [f"Field {i}"])
        else:
            widget = Gtk.Label(label=f"Label {i}")
        grid.attach(widget, i % 10, i // 10, 1, 1)
    window.set_child(grid)
    window.present()


app = Gtk.Application(application_id="org.cua.BigGtk4")
app.connect("activate", build)
sys.exit(app.run(sys.argv[:1]))
