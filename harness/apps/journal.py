"""The event journal every cua fixture app writes (JSON lines), so tests check effects
against the app's own record rather than cua's reply.

Environment:
  CUA_FIXTURE_JOURNAL  journal path (default: no journal)
  CUA_FIXTURE_VARIANT  a deliberate GUI change the fixture makes (see each fixture)
"""
import json
import os
import time

JOURNAL = os.environ.get("CUA_FIXTURE_JOURNAL")
VARIANT = os.environ.get("CUA_FIXTURE_VARIANT", "")


def log(event, **fields):
    """Appends one event, with its wall-clock time, to the journal (if one is set)."""
    if not JOURNAL:
        return
    fields.update(event=event, t=round(time.time(), 3))
    with open(JOURNAL, "a", encoding="utf-8") as f:
        f.write(json.dumps(fields, ensure_ascii=False) + "\n")
