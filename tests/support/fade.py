#!/usr/bin/python3
"""A GTK 3 window whose "Fade" button fades a colour swatch from red to blue (and back on
the next click) over FADE_MS, frame by frame. The button's label changes at once (an
accessibility event); the swatch repaints for a while after, with no accessibility event:
a screenshot taken as soon as the tree is quiet shows a colour in between."""
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

FADE_MS = 300
FRAME_MS = 16
RED, BLUE = (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)

state = {"colour": RED, "target": RED, "clicks": 0}


css = Gtk.CssProvider()


def paint():
    r, g, b = (round(c * 255) for c in state["colour"])
    css.load_from_data(f"#swatch {{ background-color: rgb({r},{g},{b}); }}".encode())


def fade(button, area):
    state["clicks"] += 1
    button.set_label(f"Fade ({state['clicks']})")
    start, end = state["colour"], (BLUE if state["target"] == RED else RED)
    state["target"] = end
    began = GLib.get_monotonic_time()

    def step():
        t = min(1.0, (GLib.get_monotonic_time() - began) / (FADE_MS * 1000))
        state["colour"] = tuple(a + (b - a) * t for a, b in zip(start, end))
        paint()
        return t < 1.0

    GLib.timeout_add(FRAME_MS, step)


window = Gtk.Window(title="cua fade")
window.set_default_size(240, 200)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
button = Gtk.Button(label="Fade")
Gtk.StyleContext.add_provider_for_screen(
    window.get_screen(), css, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION
)
area = Gtk.Box(name="swatch")
area.set_size_request(240, 160)
paint()
button.connect("clicked", fade, area)
box.pack_start(button, False, False, 0)
box.pack_start(area, True, True, 0)
window.add(box)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
