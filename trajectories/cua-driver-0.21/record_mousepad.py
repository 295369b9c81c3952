"""Records mousepad-note with the real cua-driver: launches Mousepad through the driver's
own MCP server, starts its recorder, types into the editor three times by element_token
(read from a fresh get_window_state before each), the first ending a line, and stops the
recorder. The window's title changes as the document becomes modified
("Untitled 1 - Mousepad" becomes "*Untitled 1 - Mousepad").

Usage (inside a desktop, e.g. after `eval "$(cua sandbox start)"`):
  python3 record_mousepad.py CUA_DRIVER_BINARY OUTPUT_DIR

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
                       "clientInfo": {"name": "record_mousepad", "version": "1"}})
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
server.stdin.flush()
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
server.kill()
