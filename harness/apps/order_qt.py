#!/usr/bin/python3
"""cua's order form in Qt 5 or 6 (the model and the builds: order.py, beside this file).

Usage: order_qt.py [--qt 5|6] [--journal PATH] [--variant NAME]
"""
import os
import sys

from order import TOOL_TIPS, Order, button_order, labels, options

OPTS = options(lambda p: p.add_argument("--qt", default="5", choices=["5", "6"]))
VARIANT = OPTS.variant

if OPTS.qt == "6":
    from PyQt6 import QtCore, QtGui, QtWidgets
else:
    from PyQt5 import QtCore, QtGui, QtWidgets

os.environ.setdefault("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1")


def named(widget, name):
    widget.setAccessibleName(name)
    return widget


class Window(QtWidgets.QWidget):
    def __init__(self):
        super().__init__()
        self.setWindowTitle("cua order form")
        self.order = Order(
            OPTS.journal, VARIANT, self.show_order, defer=lambda ms, f: QtCore.QTimer.singleShot(ms, f)
        )
        scale = 1.5 if VARIANT == "large" else 1
        self.resize(int(380 * scale), int(460 * scale))

        box = QtWidgets.QVBoxLayout(self)
        if VARIANT == "section":
            customer = named(QtWidgets.QGroupBox("Customer"), "Customer")
            coupon = named(QtWidgets.QLineEdit(), "Coupon")
            coupon.setPlaceholderText("Coupon")
            QtWidgets.QVBoxLayout(customer).addWidget(coupon)
            box.addWidget(customer)

        form = named(QtWidgets.QWidget(), "Order")
        grid = QtWidgets.QGridLayout(form)
        box.addWidget(form)
        self.item = named(QtWidgets.QLineEdit(), "Item")
        self.quantity = named(QtWidgets.QLineEdit(), "Quantity")
        self.quantity.setReadOnly(VARIANT == "refuse_qty")
        for row, (entry, name) in enumerate([(self.item, "Item"), (self.quantity, "Quantity")]):
            grid.addWidget(QtWidgets.QLabel(name), row, 0)
            entry.textChanged.connect(lambda t, e=entry, n=name: self.changed(e, n, t))
            grid.addWidget(entry, row, 1)

        add_label, gift_label = labels(VARIANT)
        self.gift = QtWidgets.QCheckBox(gift_label)
        self.gift.toggled.connect(lambda on: self.order.log("toggled", widget="Gift wrap", active=on))
        add = QtWidgets.QPushButton(add_label.format(m="&"))
        add.clicked.connect(lambda: self.order.add(self.item.text(), self.quantity.text(), self.gift.isChecked()))
        add.setEnabled(VARIANT != "disabled_add")
        clear = QtWidgets.QPushButton("Clear")
        clear.clicked.connect(self.order.clear)
        sample = QtWidgets.QPushButton("Add")
        sample.clicked.connect(self.order.add_sample)
        buttons = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(buttons)
        for b in button_order(VARIANT, add, clear, sample):
            row.addWidget(b)
        row.addStretch()
        rows = [buttons, self.gift] if VARIANT == "reorder" else [self.gift, buttons]
        for r, widget in enumerate(rows, start=2):
            grid.addWidget(widget, r, 0, 1, 2)

        self.list = named(QtWidgets.QListWidget(), "Lines")
        box.addWidget(self.list)
        self.total_label = QtWidgets.QLabel("Total: 0")
        box.addWidget(self.total_label)
        if VARIANT == "tooltips":
            for widget, name in [(self.item, "Item"), (self.quantity, "Quantity"), (self.gift, "Gift wrap"), (add, "Add"), (clear, "Clear")]:
                widget.setToolTip(TOOL_TIPS[name])
        if VARIANT == "large":
            font = self.font()
            font.setPointSize(15)
            self.setFont(font)

    def changed(self, entry, name, text):
        self.order.log("changed", widget=name, text=text)
        # Qt's accessible text interface writes into a read-only line edit: this build
        # refuses the input itself.
        if VARIANT == "refuse_qty" and entry is self.quantity and text:
            entry.setText("")

    def show_order(self, _lines, total, added):
        if added is None:
            self.list.clear()
        else:
            self.list.addItem(added)
        self.total_label.setText(f"Total: {total}")

    def closeEvent(self, event):
        self.order.log("quit")
        super().closeEvent(event)


def dark_palette(app):
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


def main():
    app = QtWidgets.QApplication(sys.argv[:1])
    if VARIANT == "dark":
        dark_palette(app)
    window = Window()
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
