#!/usr/bin/python3
"""A GTK 3 sign-in form for redaction: a user entry, a password entry (role password_text)
and a "Card number" entry, each on a white background so a mask painted over one is plain
to see."""
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

window = Gtk.Window(title="cua sign in")
window.set_default_size(320, 220)
grid = Gtk.Grid(row_spacing=12, column_spacing=8, margin=16)
for row, (label, secret) in enumerate(
    [("User", False), ("Password", True), ("Card number", False)]
):
    grid.attach(Gtk.Label(label=label), 0, row, 1, 1)
    entry = Gtk.Entry(hexpand=True)
    entry.set_visibility(not secret)
    entry.get_accessible().set_name(label)
    grid.attach(entry, 1, row, 1, 1)
window.add(grid)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
