#!/usr/bin/python3
"""A GTK 3 window whose elements move, change and go away, for element indices read from
an older snapshot: "Add row" puts a new button above everything (every index after it
shifts), "Rename" renames itself, "Remove" destroys itself."""
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

window = Gtk.Window(title="cua shifting")
window.set_default_size(240, 300)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
rows = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
added = [0]


def add_row(_button):
    added[0] += 1
    row = Gtk.Button(label=f"Row {added[0]}")
    rows.pack_start(row, False, False, 0)
    rows.reorder_child(row, 0)
    row.show()


def rename(button):
    button.set_label("Renamed")


add = Gtk.Button(label="Add row")
add.connect("clicked", add_row)
renamed = Gtk.Button(label="Rename")
renamed.connect("clicked", rename)
remove = Gtk.Button(label="Remove")
remove.connect("clicked", lambda b: b.destroy())
box.pack_start(rows, False, False, 0)
for b in (add, renamed, remove):
    box.pack_start(b, False, False, 0)
window.add(box)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
