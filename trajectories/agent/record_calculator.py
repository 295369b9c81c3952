"""Records calculator-escalated the way an agent that follows cua's advice does: over cua's
own MCP server it turns the recorder on, launches GNOME Calculator (GTK 4), reads the
window, and presses 7 × 6 = in the background first, as agents do; when cua answers a press
with `escalation.recommended: foreground` (GTK 4 ignores synthetic key events), it sends the
same press again in the foreground. The recording therefore holds every attempt and its
retry; `cua replay --plan` folds each attempt into its retry.

Usage (inside a desktop, e.g. after `eval "$(cua sandbox start)"`), from the project root:
  python3 trajectories/agent/record_calculator.py target/release/cua trajectories/agent/calculator-escalated
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cua-driver-0.21"))
from driver_session import DriverSession  # noqa: E402

cua, output_dir = sys.argv[1:3]
session = DriverSession(cua, "record_calculator_agent")


def call(tool, arguments):
    result = session.call(tool, arguments)
    if result.get("isError"):
        raise SystemExit(f"{tool}: {result['content'][0]['text']}")
    return result["structuredContent"]


call("set_recording", {"enabled": True, "output_dir": os.path.abspath(output_dir)})
pid = call("launch_app", {"name": "gnome-calculator"})["pid"]


def calculator_window():
    """The calculator's window, once its buttons are in its tree (bounded)."""
    deadline = time.time() + 30
    while time.time() < deadline:
        for window in call("list_windows", {"pid": pid})["windows"]:
            state = call("get_window_state", {"pid": pid, "window_id": window["window_id"]})
            if any(e.get("name") == "7" for e in state["elements"]):
                return window["window_id"]
        time.sleep(0.3)
    raise SystemExit("the calculator's buttons never showed")


window = calculator_window()
escalated = 0
for key in ["7", "asterisk", "6", "return"]:
    answer = call("press_key", {"pid": pid, "window_id": window, "key": key})
    if (answer.get("escalation") or {}).get("recommended") == "foreground":
        escalated += 1
        call("press_key", {"pid": pid, "window_id": window, "key": key,
                           "delivery_mode": "foreground"})
# GTK 4 shows a press a moment later: read until the result shows (bounded), as an agent
# checks its work.
deadline = time.time() + 10
while True:
    shown = call("get_window_state", {"pid": pid, "window_id": window})["tree_markdown"]
    if 'text value="42"' in shown or time.time() > deadline:
        break
    time.sleep(0.3)
call("set_recording", {"enabled": False})
session.close()
if 'text value="42"' not in shown:
    raise SystemExit(f"the calculator does not show 42:\n{shown}")
print(f"recorded 7 × 6 = 42 into {output_dir}: {escalated} of 4 presses escalated and retried")
