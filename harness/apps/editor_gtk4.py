#!/usr/bin/python3
"""cua's flake fixture (GTK 4): a small editor that, like many real ones, shows a busy
indicator after every edit. Each change to Notes starts a save: a progress bar fills in
five 100 ms steps beside a "Saving…" label, then the bar hides and the label reads
"Saved". A run that reads the window mid-save, or while a select-all is repainting, sees a
state a golden must never keep (the harness's stable after-states; docs/harness.md). Every
edit and save is journaled.

Environment:
  CUA_FIXTURE_JOURNAL  journal path (default: no journal)
"""
import os
import sys

from journal import log  # harness/apps/journal.py, beside this file

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402

STEP_MS = 100


def named(widget, name):
    widget.update_property([Gtk.AccessibleProperty.LABEL], [name])
    return widget


class Editor(Gtk.ApplicationWindow):
    def __init__(self, app):
        super().__init__(application=app, title="cua editor gtk4")
        self.set_default_size(420, 300)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
        for side in ("top", "bottom", "start", "end"):
            getattr(box, f"set_margin_{side}")(12)
        self.set_child(box)
        self.notes = named(Gtk.TextView(), "Notes")
        self.notes.set_size_request(-1, 140)
        box.append(self.notes)
        self.bar = named(Gtk.ProgressBar(), "Saving")
        self.bar.set_visible(False)
        box.append(self.bar)
        self.status = Gtk.Label(label="Saved", xalign=0)
        box.append(self.status)
        buffer = self.notes.get_buffer()
        buffer.connect("changed", self.on_edit)
        self.saving = None

    def on_edit(self, buffer):
        log("changed", widget="Notes", text=buffer.get_text(buffer.get_start_iter(), buffer.get_end_iter(), False))
        self.status.set_text("Saving…")
        self.bar.set_fraction(0)
        self.bar.set_visible(True)
        if self.saving:
            GLib.source_remove(self.saving)
        self.saving = GLib.timeout_add(STEP_MS, self.save_step)

    def save_step(self):
        fraction = self.bar.get_fraction() + 0.2
        if fraction < 0.99:
            self.bar.set_fraction(fraction)
            return True
        self.bar.set_visible(False)
        self.status.set_text("Saved")
        self.saving = None
        log("saved")
        return False


def main():
    app = Gtk.Application(application_id="org.cua.EditorGtk4", flags=Gio.ApplicationFlags.NON_UNIQUE)
    app.connect("activate", lambda a: Editor(a).present())
    log("started", pid=os.getpid(), toolkit="gtk4")
    return app.run([])


if __name__ == "__main__":
    GLib.set_prgname("editor_gtk4")
    sys.exit(main())
