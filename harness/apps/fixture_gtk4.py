#!/usr/bin/python3
"""cua's conformance form for GTK 4: the same small form as the other toolkit fixtures,
each received event appended to a journal (JSON lines), so tests check effects against the
app's own record.

Environment:
  CUA_FIXTURE_JOURNAL  journal path (default: no journal)
  CUA_FIXTURE_VARIANT  "relabel": the counter reads "Total: N" instead of "Count: N".
"""
import os
import sys

from journal import VARIANT, log  # harness/apps/journal.py, beside this file

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402


def named(widget, name):
    widget.update_property([Gtk.AccessibleProperty.LABEL], [name])
    return widget


class Fixture(Gtk.ApplicationWindow):
    def __init__(self, app):
        super().__init__(application=app, title="cua fixture gtk4")
        self.set_default_size(420, 560)
        self.count = 0

        hello = Gio.SimpleAction.new("hello", None)
        hello.connect("activate", lambda *_: log("activated", widget="Say hello"))
        app.add_action(hello)
        menu = Gio.Menu()
        file_menu = Gio.Menu()
        file_menu.append("Say hello", "app.hello")
        menu.append_submenu("File", file_menu)
        menu_button = Gtk.MenuButton(label="File", menu_model=file_menu)

        grid = Gtk.Grid(row_spacing=8, column_spacing=8)
        for side in ("top", "bottom", "start", "end"):
            getattr(grid, f"set_margin_{side}")(12)
        self.set_child(grid)
        grid.attach(menu_button, 0, 0, 1, 1)

        self.counter = Gtk.Label(label=self.counter_text(), xalign=0)
        grid.attach(self.counter, 1, 0, 1, 1)

        increment = Gtk.Button(label="Increment")
        increment.connect("clicked", self.on_increment)
        grid.attach(increment, 0, 1, 1, 1)
        reset = Gtk.Button(label="Reset")
        reset.connect("clicked", self.on_reset)
        grid.attach(reset, 1, 1, 1, 1)
        # Right- and middle-clicking Options are journaled (a person's clicks on a widget).
        options = Gtk.Button(label="Options")
        right = Gtk.GestureClick(button=3)
        right.connect("pressed", lambda *_: log("context-menu", widget="Options"))
        options.add_controller(right)
        middle = Gtk.GestureClick(button=2)
        middle.connect("pressed", lambda *_: log("middle-click", widget="Options"))
        options.add_controller(middle)
        grid.attach(options, 2, 1, 1, 1)

        feature = Gtk.CheckButton(label="Enable feature")
        feature.connect("toggled", lambda b: log("toggled", widget="Enable feature", active=b.get_active()))
        grid.attach(feature, 0, 2, 2, 1)

        small = Gtk.CheckButton(label="Small", active=True)
        large = Gtk.CheckButton(label="Large", group=small)
        large.connect("toggled", lambda b: log("toggled", widget="Large", active=b.get_active()))
        grid.attach(small, 0, 3, 1, 1)
        grid.attach(large, 1, 3, 1, 1)

        entry = named(Gtk.Entry(placeholder_text="Name"), "Name")
        entry.connect("changed", lambda e: log("changed", widget="Name", text=e.get_text()))
        focus = Gtk.EventControllerFocus()
        focus.connect("enter", lambda *_: log("focused", widget="Name"))
        entry.add_controller(focus)
        grid.attach(entry, 0, 4, 2, 1)

        notes = named(Gtk.TextView(), "Notes")
        notes.set_size_request(-1, 60)
        buffer = notes.get_buffer()
        buffer.connect(
            "changed",
            lambda b: log("changed", widget="Notes", text=b.get_text(b.get_start_iter(), b.get_end_iter(), False)),
        )
        grid.attach(notes, 0, 5, 2, 1)

        size = named(Gtk.DropDown.new_from_strings(["Left", "Center", "Right"]), "Size")
        size.connect(
            "notify::selected",
            lambda d, _: log("selected", widget="Size", text=d.get_selected_item().get_string()),
        )
        grid.attach(size, 0, 6, 2, 1)

        level = named(Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1), "Level")
        level.set_hexpand(True)
        level.connect("value-changed", lambda s: log("value-changed", widget="Level", value=s.get_value()))
        grid.attach(level, 0, 7, 1, 1)
        amount = named(Gtk.SpinButton.new_with_range(0, 100, 1), "Amount")
        amount.connect("value-changed", lambda s: log("value-changed", widget="Amount", value=s.get_value()))
        grid.attach(amount, 1, 7, 1, 1)

        # A single click selects a row, a double click activates it.
        items = Gtk.ListBox(activate_on_single_click=False)
        for i in range(1, 51):
            items.append(Gtk.Label(label=f"Item {i}", xalign=0))
        items.connect(
            "row-selected",
            lambda _, row: row and log("selected", widget="Items", text=row.get_child().get_label()),
        )
        items.connect(
            "row-activated", lambda _, row: log("activated", widget="Items", text=row.get_child().get_label())
        )
        scroller = named(Gtk.ScrolledWindow(child=items), "Items")
        scroller.set_size_request(-1, 90)
        scroller.get_vadjustment().connect(
            "value-changed", lambda a: log("scrolled", widget="Items", value=a.get_value())
        )
        grid.attach(scroller, 0, 8, 2, 1)

        keys = Gtk.EventControllerKey()
        # Before the focused widget: keys an entry consumes (Home, Ctrl+A) are journaled too.
        keys.set_propagation_phase(Gtk.PropagationPhase.CAPTURE)
        keys.connect("key-pressed", self.on_key)
        self.add_controller(keys)
        self.connect("close-request", self.on_close)
        # Becoming the active window (bring_to_front) is journaled.
        self.connect("notify::is-active", lambda w, _: w.is_active() and log("activated-window"))

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

    def on_key(self, _controller, keyval, _keycode, _state):
        from gi.repository import Gdk

        log("key-press", key=Gdk.keyval_name(keyval))
        return False

    def on_close(self, _window):
        log("quit")
        return False


def main():
    # NON_UNIQUE: every launch is its own process (the matrix launches one per case).
    app = Gtk.Application(application_id="org.cua.FixtureGtk4", flags=Gio.ApplicationFlags.NON_UNIQUE)
    app.connect("activate", lambda a: Fixture(a).present())
    log("started", variant=VARIANT, pid=os.getpid(), toolkit="gtk4")
    return app.run([])


if __name__ == "__main__":
    GLib.set_prgname("fixture_gtk4")
    sys.exit(main())
