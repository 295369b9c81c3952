#!/usr/bin/python3
"""cua's conformance form for GTK 3: the same small form as the other toolkit fixtures
(fixture_gtk4.py, fixture_qt.py, fixture.html), each received event appended to a journal
(JSON lines), so tests check effects against the app's own record. (fixture.py is the
smaller GTK 3 app of the regression demo and the shipped `fixture` scenario.)

Environment:
  CUA_FIXTURE_JOURNAL  journal path (default: no journal)
"""
import os
import sys

from journal import VARIANT, log  # harness/apps/journal.py, beside this file

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gtk  # noqa: E402

from fixture import Counting  # noqa: E402  harness/apps/fixture.py: counter and journaled keys


def named(widget, name):
    widget.get_accessible().set_name(name)
    return widget


class Fixture(Counting):
    def __init__(self):
        super().__init__(title="cua fixture gtk3")
        self.set_default_size(420, 560)
        self.count = 0

        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
        self.add(box)
        menubar = Gtk.MenuBar()
        file_item = Gtk.MenuItem(label="File")
        file_menu = Gtk.Menu()
        hello = Gtk.MenuItem(label="Say hello")
        hello.connect("activate", lambda _: log("activated", widget="Say hello"))
        file_menu.append(hello)
        file_item.set_submenu(file_menu)
        menubar.append(file_item)
        box.pack_start(menubar, False, False, 0)

        grid = Gtk.Grid(row_spacing=8, column_spacing=8, margin=12)
        box.pack_start(grid, True, True, 0)

        self.counter = Gtk.Label(label=self.counter_text(), xalign=0)
        grid.attach(self.counter, 0, 0, 3, 1)

        increment = Gtk.Button(label="Increment")
        increment.connect("clicked", self.on_increment)
        grid.attach(increment, 0, 1, 1, 1)
        reset = Gtk.Button(label="Reset")
        reset.connect("clicked", self.on_reset)
        grid.attach(reset, 1, 1, 1, 1)
        # Right- and middle-clicking Options are journaled (a person's clicks on a widget).
        options = Gtk.Button(label="Options")
        options.connect(
            "button-press-event",
            lambda _, e: (e.button == 3 and log("context-menu", widget="Options"))
            or (e.button == 2 and log("middle-click", widget="Options")),
        )
        grid.attach(options, 2, 1, 1, 1)

        feature = Gtk.CheckButton(label="Enable feature")
        feature.connect("toggled", lambda b: log("toggled", widget="Enable feature", active=b.get_active()))
        grid.attach(feature, 0, 2, 3, 1)

        small = Gtk.RadioButton.new_with_label(None, "Small")
        large = Gtk.RadioButton.new_with_label_from_widget(small, "Large")
        large.connect("toggled", lambda b: log("toggled", widget="Large", active=b.get_active()))
        grid.attach(small, 0, 3, 1, 1)
        grid.attach(large, 1, 3, 1, 1)

        entry = named(Gtk.Entry(placeholder_text="Name"), "Name")
        entry.connect("changed", lambda e: log("changed", widget="Name", text=e.get_text()))
        entry.connect("focus-in-event", lambda *_: log("focused", widget="Name"))
        grid.attach(entry, 0, 4, 3, 1)

        notes = named(Gtk.TextView(), "Notes")
        notes.set_size_request(-1, 60)
        buffer = notes.get_buffer()
        buffer.connect(
            "changed",
            lambda b: log("changed", widget="Notes", text=b.get_text(b.get_start_iter(), b.get_end_iter(), False)),
        )
        grid.attach(notes, 0, 5, 3, 1)

        size = named(Gtk.ComboBoxText(), "Size")
        for option in ("Left", "Center", "Right"):
            size.append_text(option)
        size.set_active(0)
        size.connect("changed", lambda c: log("selected", widget="Size", text=c.get_active_text()))
        grid.attach(size, 0, 6, 3, 1)

        level = named(Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1), "Level")
        level.set_hexpand(True)
        level.set_draw_value(False)
        level.connect("value-changed", lambda s: log("value-changed", widget="Level", value=s.get_value()))
        grid.attach(level, 0, 7, 2, 1)
        amount = named(Gtk.SpinButton.new_with_range(0, 100, 1), "Amount")
        amount.connect("value-changed", lambda s: log("value-changed", widget="Amount", value=s.get_value()))
        grid.attach(amount, 2, 7, 1, 1)

        # A single click selects a row, a double click activates it.
        items = Gtk.ListBox(activate_on_single_click=False)
        for i in range(1, 51):
            row = Gtk.ListBoxRow()
            row.add(Gtk.Label(label=f"Item {i}", xalign=0))
            named(row, f"Item {i}")
            items.add(row)
        items.connect(
            "row-selected",
            lambda _, row: row and log("selected", widget="Items", text=row.get_child().get_label()),
        )
        items.connect(
            "row-activated",
            lambda _, row: log("activated", widget="Items", text=row.get_child().get_label()),
        )
        scroller = named(Gtk.ScrolledWindow(), "Items")
        scroller.add(items)
        scroller.set_size_request(-1, 90)
        scroller.get_vadjustment().connect(
            "value-changed", lambda a: log("scrolled", widget="Items", value=a.get_value())
        )
        grid.attach(scroller, 0, 8, 3, 1)

        self.connect("key-press-event", self.on_key)
        self.connect("destroy", self.on_quit)
        # Becoming the active window (bring_to_front) is journaled.
        self.connect("notify::is-active", lambda w, _: w.is_active() and log("activated-window"))



def main():
    log("started", variant=VARIANT, pid=os.getpid(), toolkit="gtk3")
    window = Fixture()
    window.show_all()
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
