#!/usr/bin/python3
"""A window holding N buttons ("Button 0" .. "Button N-1") in one scrolled grid container,
for reading big windows (tests/big_windows.rs, `cargo bench --bench tree_size`): every
button is a child of the same container, the shape that a child-count cap would cut.

Usage: button_grid.py gtk3|gtk4|qt5|qt6 N [COLUMNS]

Pressing a button appends `{"event": "clicked", "button": "Button K", ...}` to the journal
(CUA_FIXTURE_JOURNAL), so a test checks a press on a far button through the app itself.
"""
import os
import sys

from journal import log  # harness/apps/journal.py, beside this file

TOOLKIT = sys.argv[1]
COUNT = int(sys.argv[2])
COLUMNS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
TITLE = f"cua grid {TOOLKIT} {COUNT}"


def clicked(name):
    log("clicked", button=name)


def gtk(version):
    import gi

    gi.require_version("Gtk", version)
    from gi.repository import Gtk

    grid = Gtk.Grid(column_spacing=2, row_spacing=2)
    for i in range(COUNT):
        name = f"Button {i}"
        button = Gtk.Button(label=name)
        button.connect("clicked", lambda _b, n=name: clicked(n))
        grid.attach(button, i % COLUMNS, i // COLUMNS, 1, 1)
    scrolled = Gtk.ScrolledWindow()
    if version == "3.0":
        scrolled.add(grid)
        window = Gtk.Window(title=TITLE)
        window.set_default_size(1200, 800)
        window.add(scrolled)
        window.connect("destroy", Gtk.main_quit)
        window.show_all()
        Gtk.main()
        return
    scrolled.set_child(grid)

    def build(app):
        window = Gtk.ApplicationWindow(application=app, title=TITLE)
        window.set_default_size(1200, 800)
        window.set_child(scrolled)
        window.present()

    app = Gtk.Application(application_id=f"org.cua.Grid{COUNT}")
    app.connect("activate", build)
    app.run(sys.argv[:1])


def qt(version):
    os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")
    if version == "6":
        from PyQt6 import QtWidgets
    else:
        from PyQt5 import QtWidgets
    app = QtWidgets.QApplication(sys.argv[:1])
    window = QtWidgets.QMainWindow()
    window.setWindowTitle(TITLE)
    holder = QtWidgets.QWidget()
    layout = QtWidgets.QGridLayout(holder)
    layout.setSpacing(2)
    for i in range(COUNT):
        name = f"Button {i}"
        button = QtWidgets.QPushButton(name)
        button.clicked.connect(lambda _c=False, n=name: clicked(n))
        layout.addWidget(button, i // COLUMNS, i % COLUMNS)
    scrolled = QtWidgets.QScrollArea()
    scrolled.setWidget(holder)
    window.setCentralWidget(scrolled)
    window.resize(1200, 800)
    window.show()
    app.exec() if version == "6" else app.exec_()


if TOOLKIT == "gtk3":
    gtk("3.0")
elif TOOLKIT == "gtk4":
    gtk("4.0")
elif TOOLKIT in ("qt5", "qt6"):
    qt(TOOLKIT[2])
else:
    sys.exit(f"button_grid.py: unknown toolkit {TOOLKIT!r} (gtk3, gtk4, qt5 or qt6)")
