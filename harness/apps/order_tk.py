#!/usr/bin/python3
"""cua's order form in Tk (the model and the builds: order.py, beside this file).

Tk has no accessibility bridge and its windows set no _NET_WM_PID: cua reaches this
twin through the X-Resource extension (its pid), OCR (its text) and pixels (its
buttons), which is what tests/no_tree.rs checks.
"""
import tkinter as tk

from order import Order, button_order, labels, options  # noqa: E402

OPTS = options()
VARIANT = OPTS.variant
# One font everywhere, so OCR reads the same glyphs on every machine with DejaVu.
FONT = ("DejaVu Sans", 15 if VARIANT == "large" else 12)


class Window:
    def __init__(self, root):
        self.root = root
        root.title("cua order form")
        root.geometry("570x690" if VARIANT == "large" else "380x460")
        root.resizable(False, False)
        root.option_add("*Font", FONT)
        self.order = Order(OPTS.journal, VARIANT, self.show_order, defer=lambda ms, f: root.after(ms, f))

        outer = tk.Frame(root, padx=12, pady=12 + (60 if VARIANT == "moved_down" else 0))
        outer.pack(fill="both", expand=True)
        form = tk.Frame(outer)
        form.pack(fill="x")
        self.item, self.quantity = tk.StringVar(), tk.StringVar()
        for row, (name, var) in enumerate([("Item", self.item), ("Quantity", self.quantity)]):
            tk.Label(form, text=name, anchor="w").grid(row=row, column=0, sticky="w", pady=4)
            state = "readonly" if name == "Quantity" and VARIANT == "refuse_qty" else "normal"
            entry = tk.Entry(form, textvariable=var, width=18, state=state)
            entry.grid(row=row, column=1, sticky="w", padx=8, pady=4)
            var.trace_add("write", lambda *_, n=name, v=var: self.order.log("changed", widget=n, text=v.get()))

        add_label, gift_label = labels(VARIANT)
        self.gift = tk.BooleanVar()
        gift = tk.Checkbutton(form, text=gift_label, variable=self.gift, anchor="w",
                              indicatoron=True, height=2 if VARIANT == "large" else 1,
                              command=lambda: self.order.log("toggled", widget="Gift wrap", active=self.gift.get()))
        if VARIANT == "inert_gift":
            for event in ("<Button-1>", "<ButtonRelease-1>"):
                gift.bind(event, lambda _e: "break")
        buttons = tk.Frame(form)
        add = tk.Button(buttons, text=add_label.format(m=""), command=self.add,
                        state="disabled" if VARIANT == "disabled_add" else "normal")
        clear = tk.Button(buttons, text="Clear", command=self.order.clear)
        sample = tk.Button(buttons, text="Add", command=self.order.add_sample)
        for b in button_order(VARIANT, add, clear, sample):
            b.pack(side="left", padx=(0, 8))
        rows = [buttons, gift] if VARIANT == "reorder" else [gift, buttons]
        for row, widget in enumerate(rows, start=2):
            widget.grid(row=row, column=0, columnspan=2, sticky="w", pady=4)

        self.lines = tk.Listbox(outer, height=8)
        self.lines.pack(fill="both", expand=True, pady=8)
        self.total = tk.Label(outer, text="Total: 0", anchor="w")
        self.total.pack(fill="x")
        root.protocol("WM_DELETE_WINDOW", self.quit)

    def add(self):
        self.order.add(self.item.get(), self.quantity.get(), self.gift.get())

    def show_order(self, lines, total, _added):
        self.lines.delete(0, "end")
        for line in lines:
            self.lines.insert("end", line)
        self.total.configure(text=f"Total: {total}")

    def quit(self):
        self.order.log("quit")
        self.root.destroy()


if __name__ == "__main__":
    root = tk.Tk()
    Window(root)
    root.mainloop()
