"""Records mousepad-note with the real cua-driver: launches Mousepad through the driver's
own MCP server, starts its recorder, types into the editor three times by element_token
(read from a fresh get_window_state before each), the first ending a line, and stops the
recorder. The window's title changes as the document becomes modified
("Untitled 1 - Mousepad" becomes "*Untitled 1 - Mousepad").

Usage (inside a desktop, e.g. after `eval "$(cua sandbox start)"`):
  python3 record_mousepad.py CUA_DRIVER_BINARY OUTPUT_DIR

cua-driver 0.21.0 was built from trycua/cua b296ec9 (libs/cua-driver/rust, release).
"""
import sys
import time

from driver_session import DriverSession

driver, output_dir = sys.argv[1:3]
session = DriverSession(driver, "record_mousepad")
call = session.call
launched = call("launch_app", {"name": "mousepad"})["structuredContent"]
pid, window = launched["pid"], launched["windows"][0]["window_id"]
time.sleep(1.5)  # the window's first paint; only the recording's start depends on it
call("start_recording", {"output_dir": output_dir})


def editor():
    state = call("get_window_state", {"pid": pid, "window_id": window, "include_screenshot": False})
    return next(e for e in state["structuredContent"]["elements"] if e.get("role") == "text")


# cua-driver 0.21's background press_key fails on Mousepad here ("no focus-free input
# backend"), so the line break is typed as text.
for text in ["Hello from cua-driver\n", "second line", " and a third"]:
    call("type_text", {"pid": pid, "element_token": editor()["element_token"], "text": text})
    time.sleep(0.6)  # the recorder reads the effect after
call("stop_recording", {})
session.close()
