#!/usr/bin/python3
"""A week planner in Tk: a grid of empty entries under day headings, beside week labels.

Up close, every empty cell looks the same, and so do a few cells around it: a click into
one, replayed by its picture, can only be told apart by the text near it (#55 item 5).
Tk has no accessibility bridge: cua reads it by OCR and pixels.

Arguments (default: $CUA_FIXTURE_JOURNAL and $CUA_FIXTURE_VARIANT): --journal PATH (every
cell's text as it changes: {"event": "changed", "cell": "Friday/Week 5", "text": …}),
--variant NAME ("moved": a notice above the grid moves it down and right).
"""
import argparse
import json
import os
import time
import tkinter as tk

parser = argparse.ArgumentParser()
parser.add_argument("--journal", default=os.environ.get("CUA_FIXTURE_JOURNAL"))
parser.add_argument("--variant", default=os.environ.get("CUA_FIXTURE_VARIANT", ""), choices=["", "moved"])
OPTS = parser.parse_args()
VARIANT = OPTS.variant


def log(event, **fields):
    if OPTS.journal:
        fields.update(event=event, t=round(time.time(), 3))
        with open(OPTS.journal, "a", encoding="utf-8") as f:
            f.write(json.dumps(fields, ensure_ascii=False) + "\n")


DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
WEEKS = [f"Week {n}" for n in range(1, 7)]

root = tk.Tk()
root.title("cua week planner")
root.geometry("900x420")
root.resizable(False, False)
# One font everywhere, so OCR reads the same glyphs on every machine with DejaVu.
root.option_add("*Font", ("DejaVu Sans", 12))
moved = VARIANT == "moved"
outer = tk.Frame(root, padx=12 + (36 if moved else 0), pady=12)
outer.pack(fill="both", expand=True)
if moved:
    tk.Label(outer, text="Notice: planning closes on Friday", anchor="w").pack(fill="x", pady=(0, 20))
grid = tk.Frame(outer)
grid.pack(anchor="nw")
for col, day in enumerate(DAYS, start=1):
    tk.Label(grid, text=day).grid(row=0, column=col, pady=4)
for row, week in enumerate(WEEKS, start=1):
    tk.Label(grid, text=week, anchor="w").grid(row=row, column=0, sticky="w", padx=(0, 8))
    for col, day in enumerate(DAYS, start=1):
        text = tk.StringVar()
        text.trace_add("write", lambda *_, c=f"{day}/{week}", v=text: log("changed", cell=c, text=v.get()))
        tk.Entry(grid, textvariable=text, width=9).grid(row=row, column=col, padx=4, pady=6)
root.mainloop()
