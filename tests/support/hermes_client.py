"""Drives cua through hermes-agent's own computer_use backend (PyPI hermes-agent, its
`tools/computer_use/cua_backend.py`), the way hermes' tool layer drives it: model-facing
actions through `tools.computer_use.tool._dispatch`, the rest through the backend's
methods. Each action's effect is read from the fixture app's own journal (or, where the
effect is not the app's, from the desktop: a process gone, a file written).

Usage: hermes_client.py JOURNAL PID WINDOW_ID TOOLKIT OUT_DIR
Environment: HERMES_CUA_DRIVER_CMD is the cua binary (read by hermes at import).
Prints one JSON object: {"steps": [{"name", "ok", "detail", "fails_on_cua_driver"}]}.
"""
import json
import os
import sys
import time

journal_path, pid, window_id, toolkit, out_dir = sys.argv[1:6]
pid, window_id = int(pid), int(window_id)

from tools.computer_use import cua_backend  # noqa: E402
from tools.computer_use.tool import _dispatch  # noqa: E402

WAIT = 4.0


def journal():
    try:
        with open(journal_path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def shows(seen, predicate):
    """Waits (bounded) until the journal shows, after its first `seen` events, one
    `predicate` accepts."""
    deadline = time.monotonic() + WAIT
    while True:
        if any(predicate(e) for e in journal()[seen:]):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def result(reply):
    """A dispatch reply (JSON text or an ActionResult) as a dict."""
    if isinstance(reply, str):
        try:
            return json.loads(reply)
        except ValueError:
            return {"text": reply}
    if isinstance(reply, dict):
        return reply
    return {k: getattr(reply, k, None) for k in ("ok", "message", "effect", "escalation", "code")}


backend = cua_backend.CuaDriverBackend()
backend.start()
steps = []


def step(name, run, check, fails_on_cua_driver=None):
    """Runs one action; `check(reply, seen)` says whether its effect showed."""
    seen = len(journal())
    try:
        reply = run()
        ok, detail = check(reply, seen)
    except Exception as e:  # a step that raises failed; the others still run
        ok, detail = False, f"{type(e).__name__}: {e}"
    steps.append({"name": name, "ok": bool(ok), "detail": str(detail)[:600],
                  "fails_on_cua_driver": fails_on_cua_driver})


def event(kind, widget=None, **fields):
    def match(e):
        return (e.get("event") == kind and (widget is None or e.get("widget") == widget)
                and all(e.get(k) == v for k, v in fields.items()))
    return match


def journaled(predicate):
    def check(reply, seen):
        return shows(seen, predicate), result(reply)
    return check


def dispatch(action, **args):
    return lambda: _dispatch(backend, action, args)


def capture(mode="som"):
    return _dispatch(backend, "capture", {"mode": mode, "pid": pid, "window_id": window_id})


def element(label, role=None):
    """The index of the element `label` in a fresh capture (hermes' UIElement list)."""
    cap = backend.capture(mode="som", pid=pid, window_id=window_id)
    for e in cap.elements:
        if e.label == label and (role is None or e.role == role):
            return e
    raise LookupError(f"no element {label!r} among {[(e.role, e.label) for e in cap.elements]}")


def window_origin():
    """The window's screen origin: element bounds are screen points (cua-driver's frames),
    pixel actions take window-local pixels."""
    listed = backend.call_tool("list_windows", {"pid": pid})
    for w in (listed.get("structuredContent") or {}).get("windows", []):
        if w.get("window_id") == window_id:
            return w["x"], w["y"]
    raise LookupError(f"window {window_id} is not listed")


def centre(label, role=None):
    x, y, w, h = element(label, role).bounds
    if w <= 0 or h <= 0:
        raise LookupError(f"element {label!r} has no bounds")
    ox, oy = window_origin()
    return [x - ox + w // 2, y - oy + h // 2]


# Escalation as hermes' model follows it: background first; when the effect does not show
# and cua's answer recommends foreground, the same action again in the foreground.
def escalating_run(send, predicate):
    """`send(extra)` dispatches the action with `extra` arguments added."""
    seen = len(journal())
    first = result(send({}))
    if shows(seen, predicate):
        return True, {"background": first}
    recommended = (first.get("escalation") or {}).get("recommended")
    if recommended != "foreground":
        return False, {"background": first, "why": "no effect and no foreground recommendation"}
    seen = len(journal())
    retry = result(send({"delivery_mode": "foreground"}))
    return shows(seen, predicate), {"background": first, "foreground": retry}


def escalating(action, args, predicate):
    return lambda: escalating_run(lambda extra: _dispatch(backend, action, dict(args, **extra)), predicate)


# Observation.
def captured(mode):
    def check(reply, _seen):
        r = result(reply)
        elements = r.get("elements") or []
        if mode == "vision":
            return r.get("width", 0) > 0 and not elements, {k: r.get(k) for k in ("width", "height")}
        framed = [e for e in elements if any(e.get("bounds", [0, 0, 0, 0])[2:])]
        return (len(elements) > 10 and len(framed) > 10 and r.get("width", 0) > 0 if mode == "som"
                else len(elements) > 10), {"elements": len(elements), "framed": len(framed)}
    return check


step("capture som", lambda: capture("som"), captured("som"))
step("capture ax", lambda: capture("ax"), captured("ax"))
step("capture vision", lambda: capture("vision"), captured("vision"))
step("element tokens", lambda: backend._snapshot_tokens if capture("som") else None,
     lambda reply, _seen: (len(reply) > 10 and all(":" in t for t in reply.values()), len(reply)))
step("list_apps", dispatch("list_apps"),
     lambda reply, _s: (any(a.get("pid") == pid for a in result(reply)["apps"]), result(reply)["count"]))
step("list_windows", dispatch("list_windows"),
     lambda reply, _s: (any(w["window_id"] == window_id for w in result(reply)["windows"]), result(reply)["count"]))
step("focus_app", lambda: backend.focus_app("Python"),
     lambda reply, _s: (reply.ok and backend._active_pid is not None, reply.message))
# Back to the fixture for everything below.
capture("som")
# A point inside the list's viewport (rows scroll under it; the viewport stays).
in_list = centre("Item 3")

# Pointer and keys. Every input goes in the background first and follows cua's
# escalation to the foreground when its answer recommends it, as hermes' model is told to.
def acts(name, action, args, predicate, **kw):
    step(name, lambda: escalating(action, args() if callable(args) else args, predicate)(),
         lambda reply, _s: reply, **kw)


acts("click element", "click", lambda: {"element": element("Increment").index}, event("clicked", "Increment"))
acts("click coordinate", "click", lambda: {"coordinate": centre("Reset")}, event("clicked", "Reset"))
acts("right_click element", "right_click", lambda: {"element": element("Options").index},
     event("context-menu", "Options"))
acts("middle_click element", "middle_click", lambda: {"element": element("Options").index},
     event("middle-click", "Options"))
acts("double_click element", "double_click", lambda: {"element": element("Item 2").index},
     event("activated", "Items", text="Item 2"))
acts("click toggle", "click", lambda: {"element": element("Enable feature").index},
     event("toggled", "Enable feature"))
acts("scroll element", "scroll", lambda: {"direction": "down", "amount": 3, "element": element("Item 3").index},
     event("scrolled", "Items"))
acts("scroll coordinate", "scroll", lambda: {"direction": "down", "amount": 3, "coordinate": in_list},
     event("scrolled", "Items"))


def level_drag(extra):
    x, y, w, h = element("Level").bounds
    ox, oy = window_origin()
    x, y = x - ox, y - oy
    return _dispatch(backend, "drag", dict({"from_coordinate": [x + w // 2, y + h // 2],
                                            "to_coordinate": [x + w * 3 // 4, y + h // 2]}, **extra))


step("drag coordinates", lambda: escalating_run(level_drag, event("value-changed", "Level")),
     lambda reply, _s: reply)
step("drag elements", lambda: _dispatch(backend, "drag", {"from_element": element("Increment").index,
                                                         "to_element": element("Reset").index}),
     lambda reply, _s: (False, result(reply)),
     fails_on_cua_driver="hermes sends from_element/to_element, which cua-driver 0.21's drag does not define "
                         "(it requires from_x/from_y/to_x/to_y)")

# Keys: the Name field clicked (focused), then text typed into whatever has the focus.
acts("click text field", "click", lambda: {"element": element("Name").index}, event("focused", "Name"))
acts("type", "type", {"text": "hermes"},
     lambda e: e.get("event") == "changed" and e.get("widget") == "Name" and "hermes" in e.get("text", ""))
acts("key", "key", {"keys": "Home"}, event("key-press", key="Home"))
acts("key combo", "key", {"keys": "ctrl+a"}, event("key-press", key="a"))
step("set_value option", lambda: _dispatch(backend, "set_value", {"element": element("Size").index,
                                                                  "value": "Right"}),
     journaled(event("selected", "Size", text="Right")))
step("set_value number", lambda: _dispatch(backend, "set_value", {"element": element("Level").index,
                                                                  "value": "42"}),
     journaled(event("value-changed", "Level", value=42.0)))
step("capture_after", lambda: _dispatch(backend, "set_value", {"element": element("Amount").index,
                                                               "value": "7", "capture_after": True}),
     lambda reply, seen: (shows(seen, event("value-changed", "Amount", value=7.0))
                          and "capture" in str(reply)[:20000], str(reply)[:200]))

# Foreground asked for outright.
step("foreground click", lambda: _dispatch(backend, "click", {"coordinate": centre("Increment"),
                                                              "delivery_mode": "foreground"}),
     journaled(event("clicked", "Increment")))
step("foreground type", lambda: (_dispatch(backend, "click", {"coordinate": centre("Name"),
                                                               "delivery_mode": "foreground"}),
                                 _dispatch(backend, "type", {"text": "fg", "delivery_mode": "foreground"}))[1],
     journaled(lambda e: e.get("event") == "changed" and "fg" in e.get("text", "")))
step("foreground key", dispatch("key", keys="End", delivery_mode="foreground"),
     journaled(event("key-press", key="End")))
step("foreground scroll", lambda: _dispatch(backend, "scroll", {"direction": "up", "amount": 3,
                                                                "coordinate": in_list,
                                                                "delivery_mode": "foreground"}),
     journaled(event("scrolled", "Items")))
step("foreground right_click", lambda: _dispatch(backend, "right_click", {"coordinate": centre("Options"),
                                                                         "delivery_mode": "foreground"}),
     journaled(event("context-menu", "Options")))
def level_drag_foreground():
    x, y = centre("Level")
    return _dispatch(backend, "drag", {"from_coordinate": [x, y], "to_coordinate": [x - 60, y],
                                       "delivery_mode": "foreground"})


step("foreground drag", level_drag_foreground, journaled(event("value-changed", "Level")))

# Windows and processes.
step("get_accessibility_tree", lambda: backend.get_accessibility_tree(),
     lambda reply, _s: (any(w.get("window_id") == window_id for w in reply.get("windows", [])),
                        len(reply.get("windows", []))))


def launch_front_kill():
    """Another app comes to the front; bring_to_front brings the fixture back; kill_app
    ends the other app."""
    launched = backend.launch_app(name="Calculator", creates_new_application_instance=True)
    other = launched["pid"]
    seen = len(journal())
    fronted = backend.bring_to_front(pid=pid, window_id=window_id)
    activated = shows(seen, event("activated-window"))
    killed = backend.kill_app(pid=other)
    return fronted, activated, killed, gone(other), other


def gone(process):
    """Whether a process ended (exited or a zombie), waited for (bounded)."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            with open(f"/proc/{process}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


step("launch_app + bring_to_front + kill_app", launch_front_kill,
     lambda reply, _s: (reply[0].ok and reply[1] and reply[2].ok and reply[3],
                        f"fronted {reply[0].message}; activated-window journaled: {reply[1]}; "
                        f"killed pid {reply[4]}: {reply[2].message}, gone: {reply[3]}"))

# The pointer, the screen and the agent cursor.
step("move_cursor", lambda: (backend.move_cursor(200, 150), backend.get_cursor_position())[1],
     lambda reply, _s: (tuple(reply) == (200, 150), reply))
step("get_screen_size", lambda: backend.get_screen_size(),
     lambda reply, _s: (reply.get("width", 0) > 0 and reply.get("height", 0) > 0, reply))
step("zoom", lambda: backend.zoom(window_id=window_id, x=0, y=0, w=100, h=80),
     lambda reply, _s: (not reply.get("isError") and bool(reply.get("images")), str(reply.get("data"))[:200]),
     fails_on_cua_driver="hermes sends x, y, w, h; cua-driver 0.21's zoom requires x1, y1, x2, y2")
step("set_agent_cursor_enabled", lambda: (backend.set_agent_cursor_enabled(True),
                                         backend.get_agent_cursor_state())[1],
     lambda reply, _s: (reply.get("enabled") is True, reply))
step("set_agent_cursor_motion", lambda: backend.set_agent_cursor_motion(glide_ms=300, dwell_ms=100),
     lambda reply, _s: (reply.ok, reply.message),
     fails_on_cua_driver="hermes sends glide_ms/dwell_ms, which cua-driver 0.21 does not define (it ignores "
                         "them and changes nothing; cua refuses them naming glide_duration_ms)")
step("set_agent_cursor_style", lambda: backend.set_agent_cursor_style(gradient_colors=["#ff0000", "#0000ff"]),
     lambda reply, _s: (reply.ok, reply.message),
     fails_on_cua_driver="cua-driver 0.21 has no set_agent_cursor_style tool")
step("get_config", lambda: backend.get_config(), lambda reply, _s: (isinstance(reply, dict) and bool(reply), reply))
step("set_config", lambda: (backend.set_config(max_image_dimension=900), backend.get_config())[1],
     lambda reply, _s: ("900" in json.dumps(reply), reply))
step("set_config back", lambda: backend.set_config(max_image_dimension=0),
     lambda reply, _s: (reply.ok, reply.message))

# Recording.
rec = os.path.join(out_dir, "hermes-recording")


def record():
    started = backend.start_recording(output_dir=rec)
    _dispatch(backend, "click", {"element": element("Increment").index})
    stopped = backend.stop_recording()
    state = backend.get_recording_state()
    return started, stopped, state


step("start/stop_recording", record,
     lambda reply, _s: (os.path.isdir(os.path.join(rec, "turn-00001")) and reply[2].get("enabled") is False,
                        reply))
step("replay_trajectory", lambda: backend.replay_trajectory(trajectory_dir=rec),
     lambda reply, _s: (not reply.get("isError"), str(reply.get("data"))[:200]),
     fails_on_cua_driver="hermes sends trajectory_dir/dry_run/speed_factor; cua-driver 0.21 requires dir")
def replayed_honestly(reply, seen):
    """The replay ran its one step and clicked Increment. The app is not fresh (the click
    was recorded at another count), so cua fails the step; its answer must say so where an
    agent framework looks, isError, with the report as structuredContent."""
    report = reply.get("structuredContent") or {}
    failed = report.get("failed", 0) > 0
    said = bool(reply.get("isError")) == failed and report.get("attempted") == 1
    return said and shows(seen, event("clicked", "Increment")), str(reply.get("data"))[:300]


step("replay_trajectory (escape hatch)", lambda: backend.call_tool("replay_trajectory", {"dir": rec}),
     replayed_honestly)
step("install_ffmpeg", lambda: backend.install_ffmpeg(),
     lambda reply, _s: (not reply.get("isError"), str(reply.get("data"))[:200]))
step("page", lambda: backend.page(pid=pid, action="get_text"),
     lambda reply, _s: (not reply.get("isError"), str(reply.get("data"))[:200]),
     fails_on_cua_driver="page drives browsers; the fixture is a GTK app (cua-driver refuses it too)")

backend.stop()
print(json.dumps({"steps": steps}))
