#!/usr/bin/python3
"""cua's order form for Qt, the twin of order_gtk3.py (same controls, names, variants and
journal), for the replay mutation suite (tests/replay_mutations.rs).

Usage: order_qt.py [--qt 5|6] [--journal PATH] [--variant NAME]
"""
import argparse
import json
import os
import sys
import time

VARIANTS = [
    "", "relabel_add", "case_add", "reorder", "section", "large", "dark", "tooltips",
    "relabel_gift", "subtract", "double", "wrong_name", "no_add", "disabled_add",
    "refuse_qty", "duplicate_add",
]  # what each is: order_gtk3.py's VARIANTS

args = argparse.ArgumentParser()
args.add_argument("--qt", default="5", choices=["5", "6"])
args.add_argument("--journal")
args.add_argument("--variant", default="", choices=VARIANTS)
OPTS = args.parse_args()
VARIANT = OPTS.variant

if OPTS.qt == "6":
    from PyQt6 import QtGui, QtWidgets
else:
    from PyQt5 import QtGui, QtWidgets

os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")


def log(event, **fields):
    if not OPTS.journal:
        return
    fields.update(event=event, t=round(time.time(), 3))
    with open(OPTS.journal, "a", encoding="utf-8") as f:
        f.write(json.dumps(fields, ensure_ascii=False) + "\n")


def named(widget, name):
    widget.setAccessibleName(name)
    return widget


class Order(QtWidgets.QWidget):
    def __init__(self):
        super().__init__()
        self.setWindowTitle("cua order form")
        scale = 1.5 if VARIANT == "large" else 1
        self.resize(int(380 * scale), int(460 * scale))
        self.lines = []
        self.total = 0

        box = QtWidgets.QVBoxLayout(self)
        if VARIANT == "section":
            customer = named(QtWidgets.QGroupBox("Customer"), "Customer")
            inner = QtWidgets.QVBoxLayout(customer)
            coupon = named(QtWidgets.QLineEdit(), "Coupon")
            coupon.setPlaceholderText("Coupon")
            inner.addWidget(coupon)
            box.addWidget(customer)

        form = named(QtWidgets.QWidget(), "Order")
        grid = QtWidgets.QGridLayout(form)
        box.addWidget(form)
        grid.addWidget(QtWidgets.QLabel("Item"), 0, 0)
        self.item = named(QtWidgets.QLineEdit(), "Item")
        self.item.textChanged.connect(lambda t: log("changed", widget="Item", text=t))
        grid.addWidget(self.item, 0, 1)
        grid.addWidget(QtWidgets.QLabel("Quantity"), 1, 0)
        self.quantity = named(QtWidgets.QLineEdit(), "Quantity")
        self.quantity.setReadOnly(VARIANT == "refuse_qty")
        self.quantity.textChanged.connect(self.on_quantity)
        grid.addWidget(self.quantity, 1, 1)

        self.gift = QtWidgets.QCheckBox(
            "Gift wrap (free)" if VARIANT == "relabel_gift" else "Gift wrap"
        )
        self.gift.toggled.connect(lambda on: log("toggled", widget="Gift wrap", active=on))

        buttons = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(buttons)
        add = QtWidgets.QPushButton({"relabel_add": "Add item", "case_add": "&ADD"}.get(VARIANT, "Add"))
        add.clicked.connect(self.on_add)
        add.setEnabled(VARIANT != "disabled_add")
        clear = QtWidgets.QPushButton("Clear")
        clear.clicked.connect(self.on_clear)
        order = [clear, add] if VARIANT == "reorder" else [add, clear]
        if VARIANT == "no_add":
            order = [clear]
            add.hide()
        if VARIANT == "duplicate_add":
            sample = QtWidgets.QPushButton("Add")
            sample.clicked.connect(self.on_add_sample)
            order = [sample] + order
        for b in order:
            row.addWidget(b)
        row.addStretch()
        if VARIANT == "reorder":
            grid.addWidget(buttons, 2, 0, 1, 2)
            grid.addWidget(self.gift, 3, 0, 1, 2)
        else:
            grid.addWidget(self.gift, 2, 0, 1, 2)
            grid.addWidget(buttons, 3, 0, 1, 2)

        self.list = named(QtWidgets.QListWidget(), "Lines")
        box.addWidget(self.list)
        self.total_label = QtWidgets.QLabel("Total: 0")
        box.addWidget(self.total_label)

        if VARIANT == "tooltips":
            for widget, tip in [
                (self.item, "What to order"),
                (self.quantity, "How many"),
                (self.gift, "Wrap it"),
                (add, "Add the line"),
                (clear, "Start again"),
            ]:
                widget.setToolTip(tip)
        if VARIANT == "large":
            font = self.font()
            font.setPointSize(15)
            self.setFont(font)

    def on_quantity(self, text):
        log("changed", widget="Quantity", text=text)
        # Qt's accessible text interface writes into a read-only line edit: this build
        # refuses the input itself.
        if VARIANT == "refuse_qty" and text:
            self.quantity.setText("")

    def on_add(self):
        log("clicked", widget="Add")
        name = self.item.text()
        try:
            quantity = int(self.quantity.text())
        except ValueError:
            quantity = 0
        if VARIANT == "wrong_name":
            name = "item"
        line = f"{quantity} × {name}" + (" (gift)" if self.gift.isChecked() else "")
        for _ in range(2 if VARIANT == "double" else 1):
            self.add_line(line, -quantity if VARIANT == "subtract" else quantity)

    def on_add_sample(self):
        log("clicked", widget="Add (sample)")
        self.add_line("1 × sample", 1)

    def add_line(self, line, amount):
        self.lines.append(line)
        self.total += amount
        self.list.addItem(line)
        self.show_total()

    def on_clear(self):
        log("clicked", widget="Clear")
        self.lines = []
        self.total = 0
        self.list.clear()
        self.show_total()

    def show_total(self):
        self.total_label.setText(f"Total: {self.total}")
        log("order", lines=self.lines, total=self.total)

    def closeEvent(self, event):
        log("quit", lines=self.lines, total=self.total)
        super().closeEvent(event)


def main():
    app = QtWidgets.QApplication(sys.argv[:1])
    if VARIANT == "dark":
        app.setStyle("Fusion")
        palette = QtGui.QPalette()
        dark, light = QtGui.QColor(45, 45, 45), QtGui.QColor(230, 230, 230)
        roles = QtGui.QPalette.ColorRole if OPTS.qt == "6" else QtGui.QPalette
        for role, color in [
            (roles.Window, dark), (roles.Base, dark), (roles.Button, dark),
            (roles.WindowText, light), (roles.Text, light), (roles.ButtonText, light),
        ]:
            palette.setColor(role, color)
        app.setPalette(palette)
    log("started", variant=VARIANT, toolkit=f"qt{OPTS.qt}")
    window = Order()
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
