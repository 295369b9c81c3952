#!/usr/bin/env python3
"""A window whose picture changes all the time (a square crossing a 600x400 canvas, 60
times a second, and a frame counter): the screen a live page's frame rate is measured on."""
import tkinter as tk

root = tk.Tk()
root.title("cua animation")
canvas = tk.Canvas(root, width=600, height=400, background="white")
canvas.pack()
square = canvas.create_rectangle(0, 180, 40, 220, fill="#1565c0")
counter = canvas.create_text(300, 30, text="0", font=("Sans", 18))
state = {"n": 0}


def step():
    state["n"] += 1
    x = (state["n"] * 7) % 560
    canvas.coords(square, x, 180, x + 40, 220)
    canvas.itemconfigure(counter, text=str(state["n"]))
    root.after(16, step)


root.after(16, step)
root.mainloop()
