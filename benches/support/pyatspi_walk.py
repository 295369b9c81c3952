"""Peer for the observe benchmark: reads the same fields cua's get_window_state reads
(role, name, states, extents, action names, text / value) for one window of one app with
pyatspi, N times, and prints each walk's duration in milliseconds as JSON."""
import json, sys, time
import pyatspi

pid, title, runs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
TEXT_ROLES = {pyatspi.ROLE_TEXT, pyatspi.ROLE_ENTRY, pyatspi.ROLE_PASSWORD_TEXT,
              pyatspi.ROLE_SPIN_BUTTON, pyatspi.ROLE_TERMINAL, pyatspi.ROLE_PARAGRAPH}

def find_window():
    for app in pyatspi.Registry.getDesktop(0):
        if app is not None and app.get_process_id() == pid:
            for win in app:
                if win is not None and win.name == title:
                    return win
            return app[0]
    raise SystemExit(f"pid {pid} not on the accessibility bus")

def walk(node, out):
    states = node.getState()
    if not states.contains(pyatspi.STATE_VISIBLE):
        return
    rec = {"role": node.getRoleName(), "name": node.name,
           "states": [pyatspi.stateToString(s) for s in states.getStates()]}
    try:
        rec["extents"] = tuple(node.queryComponent().getExtents(pyatspi.XY_SCREEN))
    except NotImplementedError:
        pass
    try:
        act = node.queryAction()
        rec["actions"] = [act.getName(i) for i in range(act.nActions)]
    except NotImplementedError:
        pass
    try:
        rec["value"] = node.queryValue().currentValue
    except NotImplementedError:
        if node.getRole() in TEXT_ROLES:
            try:
                rec["value"] = node.queryText().getText(0, -1)
            except NotImplementedError:
                pass
    out.append(rec)
    for child in node:
        if child is not None:
            walk(child, out)

times = []
count = 0
for _ in range(runs):
    t = time.perf_counter()
    window = find_window()
    nodes = []
    walk(window, nodes)
    times.append((time.perf_counter() - t) * 1000.0)
    count = len(nodes)
print(json.dumps({"times_ms": times, "nodes": count}))
