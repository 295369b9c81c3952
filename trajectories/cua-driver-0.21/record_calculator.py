"""Records calculator-7x6 with the real cua-driver: launches GNOME Calculator through the
driver's own MCP server, starts its recorder, presses 7 × 6 = by element_token (read from a
fresh get_window_state before each press), and stops the recorder.

Usage (inside a desktop, e.g. after `eval "$(cua sandbox start)"`):
  python3 record_calculator.py CUA_DRIVER_BINARY OUTPUT_DIR

cua-driver 0.21.0 was built from trycua/cua b296ec9 (libs/cua-driver/rust, release).
"""
import json
import select
import subprocess
import sys
import time

driver, output_dir = sys.argv[1:3]
server = subprocess.Popen([driver, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
next_id = 0


def request(method, params=None, timeout=60):
    """One JSON-RPC request and its answer, waited for at most `timeout` seconds."""
    global next_id
    next_id += 1
    message = {"jsonrpc": "2.0", "id": next_id, "method": method}
    if params is not None:
        message["params"] = params
    server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([server.stdout], [], [], 0.5)
        if ready:
            answer = json.loads(server.stdout.readline())
            if answer.get("id") == next_id:
                return answer
    raise TimeoutError(method)


def call(tool, arguments):
    return request("tools/call", {"name": tool, "arguments": arguments})["result"]


request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "record_calculator", "version": "1"}})
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
server.stdin.flush()
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
server.kill()
