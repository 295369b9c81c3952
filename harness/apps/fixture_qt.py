#!/usr/bin/python3
"""cua's conformance form for Qt: the same small form as the other toolkit fixtures, each
received event appended to a journal (JSON lines), so tests check effects against the
app's own record.

Usage: fixture_qt.py [5|6]   (PyQt5, the default, or PyQt6)

Environment:
  CUA_FIXTURE_JOURNAL  journal path (default: no journal)
  CUA_FIXTURE_VARIANT  "relabel": the counter reads "Total: N" instead of "Count: N".
"""
import os
import sys

from journal import VARIANT, log  # harness/apps/journal.py, beside this file

QT = sys.argv[1] if len(sys.argv) > 1 else "5"
if QT == "6":
    from PyQt6 import QtCore, QtWidgets
    from PyQt6.QtGui import QAction
else:
    from PyQt5 import QtCore, QtWidgets
    from PyQt5.QtWidgets import QAction

# Qt only exports its tree when asked; inside a cua sandbox the a11y bus says it is on,
# but this keeps the fixture accessible wherever it runs.
os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")

Qt = QtCore.Qt


def named(widget, name):
    widget.setAccessibleName(name)
    return widget


class Fixture(QtWidgets.QMainWindow):
    def __init__(self):
        super().__init__()
        self.setWindowTitle(f"cua fixture qt{QT}")
        self.count = 0

        menu = self.menuBar().addMenu("File")
        action = QAction("Say hello", self)
        action.triggered.connect(lambda: log("activated", widget="Say hello"))
        menu.addAction(action)

        body = QtWidgets.QWidget()
        grid = QtWidgets.QGridLayout(body)
        self.setCentralWidget(body)

        self.counter = QtWidgets.QLabel(self.counter_text())
        grid.addWidget(self.counter, 0, 0, 1, 3)

        increment = QtWidgets.QPushButton("Increment")
        increment.clicked.connect(self.on_increment)
        grid.addWidget(increment, 1, 0)
        reset = QtWidgets.QPushButton("Reset")
        reset.clicked.connect(self.on_reset)
        grid.addWidget(reset, 1, 1)
        # Right-clicking Options is journaled (a person's right-click on a widget).
        options = QtWidgets.QPushButton("Options")
        options.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        options.customContextMenuRequested.connect(lambda _: log("context-menu", widget="Options"))
        grid.addWidget(options, 1, 2)

        feature = QtWidgets.QCheckBox("Enable feature")
        feature.toggled.connect(lambda on: log("toggled", widget="Enable feature", active=on))
        grid.addWidget(feature, 2, 0, 1, 3)

        small = QtWidgets.QRadioButton("Small")
        large = QtWidgets.QRadioButton("Large")
        small.setChecked(True)
        large.toggled.connect(lambda on: log("toggled", widget="Large", active=on))
        grid.addWidget(small, 3, 0)
        grid.addWidget(large, 3, 1)

        entry = named(QtWidgets.QLineEdit(), "Name")
        entry.setPlaceholderText("Name")
        entry.textChanged.connect(lambda t: log("changed", widget="Name", text=t))
        grid.addWidget(entry, 4, 0, 1, 3)

        notes = named(QtWidgets.QPlainTextEdit(), "Notes")
        notes.setFixedHeight(60)
        notes.textChanged.connect(lambda: log("changed", widget="Notes", text=notes.toPlainText()))
        grid.addWidget(notes, 5, 0, 1, 3)

        size = named(QtWidgets.QComboBox(), "Size")
        size.addItems(["Left", "Center", "Right"])
        size.currentTextChanged.connect(lambda t: log("selected", widget="Size", text=t))
        grid.addWidget(size, 6, 0, 1, 3)

        level = named(QtWidgets.QSlider(Qt.Orientation.Horizontal), "Level")
        level.setRange(0, 100)
        level.valueChanged.connect(lambda v: log("value-changed", widget="Level", value=v))
        grid.addWidget(level, 7, 0)
        amount = named(QtWidgets.QSpinBox(), "Amount")
        amount.setRange(0, 100)
        amount.valueChanged.connect(lambda v: log("value-changed", widget="Amount", value=v))
        grid.addWidget(amount, 7, 1, 1, 2)

        items = named(QtWidgets.QListWidget(), "Items")
        items.addItems([f"Item {i}" for i in range(1, 51)])
        items.setFixedHeight(90)
        items.itemDoubleClicked.connect(lambda item: log("activated", widget="Items", text=item.text()))
        items.currentTextChanged.connect(lambda t: log("selected", widget="Items", text=t))
        items.verticalScrollBar().valueChanged.connect(
            lambda v: log("scrolled", widget="Items", value=v)
        )
        grid.addWidget(items, 8, 0, 1, 3)

    def counter_text(self):
        return f"{'Total' if VARIANT == 'relabel' else 'Count'}: {self.count}"

    def on_increment(self):
        self.count += 1
        self.counter.setText(self.counter_text())
        log("clicked", widget="Increment", count=self.count)

    def on_reset(self):
        self.count = 0
        self.counter.setText(self.counter_text())
        log("clicked", widget="Reset", count=self.count)

    def keyPressEvent(self, event):
        log("key-press", key=event.text() or str(event.key()))
        super().keyPressEvent(event)

    def closeEvent(self, event):
        log("quit")
        super().closeEvent(event)


def main():
    app = QtWidgets.QApplication(sys.argv[:1])
    log("started", variant=VARIANT, pid=os.getpid(), toolkit=f"qt{QT}")
    window = Fixture()
    window.resize(420, 520)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
