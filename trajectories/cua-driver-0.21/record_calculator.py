"""Records calculator-7x6 with the real cua-driver: launches GNOME Calculator through the
driver's own MCP server, starts its recorder, presses 7 × 6 = by element_token (read from a
fresh get_window_state before each press), and stops the recorder.

Usage (inside a desktop, e.g. after `eval "$(cua sandbox start)"`):
  python3 record_calculator.py CUA_DRIVER_BINARY OUTPUT_DIR

cua-driver 0.21.0 was built from trycua/cua b296ec9 (libs/cua-driver/rust, release).
"""
import sys
import time

from driver_session import DriverSession

driver, output_dir = sys.argv[1:3]
session = DriverSession(driver, "record_calculator")
call = session.call
launched = call("launch_app", {"name": "gnome-calculator"})["structuredContent"]
pid, window = launched["pid"], launched["windows"][0]["window_id"]
time.sleep(1.5)  # the window's first paint; only the recording's start depends on it
call("start_recording", {"output_dir": output_dir})
for key in ["7", "×", "6", "="]:
    state = call("get_window_state", {"pid": pid, "window_id": window, "include_screenshot": False})
    # cua-driver labels a calculator button with its name twice ("7 7").
    button = next(e for e in state["structuredContent"]["elements"]
                  if e.get("role") == "button" and (e.get("label") or "").split(" ")[0] == key)
    call("click", {"pid": pid, "element_token": button["element_token"]})
    time.sleep(0.6)  # GTK 4 shows a press's effect ~250 ms late; the recorder reads it after
call("stop_recording", {})
session.close()
