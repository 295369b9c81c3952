#!/usr/bin/python3
"""cua's fixture app: a small, deterministic GTK3 window whose every received event is
appended to a journal (JSON lines), so tests check effects against the app's own record.

Environment:
  CUA_FIXTURE_JOURNAL  journal path (default: no journal)
  CUA_FIXTURE_VARIANT  "relabel": the counter reads "Total: N" instead of "Count: N";
                       "moved": the Increment button sits after Reset.
                       Used to make a deliberate GUI regression.
"""
import os
import sys

from journal import VARIANT, log  # harness/apps/journal.py, beside this file

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402


class Counting(Gtk.Window):
    """A GTK 3 window with a counter label (`self.counter`), the Increment and Reset
    handlers, and its key presses and closing journaled (fixture_gtk3.py shares it)."""

    def counter_text(self):
        return f"{'Total' if VARIANT == 'relabel' else 'Count'}: {self.count}"

    def on_increment(self, _button):
        self.count += 1
        self.counter.set_text(self.counter_text())
        log("clicked", widget="Increment", count=self.count)

    def on_reset(self, _button):
        self.count = 0
        self.counter.set_text(self.counter_text())
        log("clicked", widget="Reset", count=self.count)

    def on_key(self, _window, event):
        from gi.repository import Gdk

        log("key-press", key=Gdk.keyval_name(event.keyval))
        return False

    def on_quit(self, _window):
        log("quit")
        Gtk.main_quit()


class Fixture(Counting):
    def __init__(self):
        super().__init__(title="cua fixture")
        self.set_default_size(420, 260)
        self.set_resizable(False)
        self.count = 0

        grid = Gtk.Grid(row_spacing=10, column_spacing=10, margin=16)
        self.add(grid)

        self.counter = Gtk.Label(label=self.counter_text())
        self.counter.set_xalign(0)
        grid.attach(self.counter, 0, 0, 2, 1)

        increment = Gtk.Button(label="Increment")
        increment.connect("clicked", self.on_increment)
        reset = Gtk.Button(label="Reset")
        reset.connect("clicked", self.on_reset)
        first, second = (reset, increment) if VARIANT == "moved" else (increment, reset)
        grid.attach(first, 0, 1, 1, 1)
        grid.attach(second, 1, 1, 1, 1)

        feature = Gtk.CheckButton(label="Enable feature")
        feature.connect("toggled", lambda b: log("toggled", widget="Enable feature", active=b.get_active()))
        grid.attach(feature, 0, 2, 2, 1)

        entry = Gtk.Entry()
        entry.set_placeholder_text("Name")
        entry.get_accessible().set_name("Name")
        entry.connect("changed", lambda e: log("changed", widget="Name", text=e.get_text()))
        grid.attach(entry, 0, 3, 2, 1)

        level = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1)
        level.set_hexpand(True)
        level.get_accessible().set_name("Level")
        level.connect("value-changed", lambda s: log("value-changed", widget="Level", value=s.get_value()))
        grid.attach(level, 0, 4, 2, 1)

        self.connect("key-press-event", self.on_key)
        self.connect("button-press-event", lambda w, e: log("button-press", button=e.button, x=round(e.x), y=round(e.y)))
        self.connect("destroy", self.on_quit)



def main():
    log("started", variant=VARIANT, pid=os.getpid())
    window = Fixture()
    window.show_all()
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
