"""Drives `cua mcp` over stdio with the official MCP Python SDK (PyPI `mcp`), as an agent
would: initialize, list tools (every input schema checked as JSON Schema), launch the
calculator, get_window_state (an image block must arrive), click by element index, record
a few clicks, stop, replay the recording. Prints one JSON object of what it saw.

Usage: mcp_python_client.py CUA_BINARY RECORDING_DIR
"""
import asyncio
import json
import os
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def field(obj, *names):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    return None


async def main(cua, recording):
    params = StdioServerParameters(command=cua, args=["mcp"], env=dict(os.environ))
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["server"] = field(init, "server_info", "serverInfo").name
            tools = (await session.list_tools()).tools
            seen["tools"] = sorted(t.name for t in tools)
            for t in tools:
                schema = field(t, "input_schema", "inputSchema")
                jsonschema.validators.validator_for(schema).check_schema(schema)
            output_schemas = {t.name: field(t, "output_schema", "outputSchema") for t in tools}
            output_schemas = {n: s for n, s in output_schemas.items() if s}
            for schema in output_schemas.values():
                jsonschema.validators.validator_for(schema).check_schema(schema)
            seen["output_schemas"] = sorted(output_schemas)
            seen["read_only"] = sorted(
                t.name for t in tools if t.annotations and field(t.annotations, "read_only_hint", "readOnlyHint")
            )

            async def call(name, args):
                r = await session.call_tool(name, args)
                return {
                    "is_error": bool(field(r, "is_error", "isError")),
                    "types": [c.type for c in r.content],
                    "text": r.content[0].text if r.content and r.content[0].type == "text" else "",
                    "structured": field(r, "structured_content", "structuredContent"),
                    "image_bytes": sum(len(c.data) for c in r.content if c.type == "image"),
                }

            launched = await call("launch_app", {"name": "Calculator"})
            pid = launched["structured"]["pid"]
            window = launched["structured"]["windows"][0]["window_id"]
            state = await call("get_window_state", {"pid": pid, "window_id": window, "include_elements": True})
            seen["state_types"] = state["types"]
            seen["image_bytes"] = state["image_bytes"]
            index = {e["name"]: e["element_index"] for e in state["structured"]["elements"]}

            async def press(key):
                i = index[key]
                return await call("click", {"pid": pid, "window_id": window, "element_index": i})

            seen["first_click"] = await press("7")
            seen["bad_call"] = await call("click", {"pid": "seven"})
            # Both the result and the error conform to click's declared output schema.
            for r in (seen["first_click"], seen["bad_call"]):
                jsonschema.validate(r["structured"], output_schemas["click"])
            seen["record_on"] = await call("set_recording", {"enabled": True, "output_dir": recording})
            for key in ["×", "6", "="]:
                await press(key)
            seen["record_off"] = await call("set_recording", {"enabled": False})

            async def display():
                s = await call("get_window_state", {"pid": pid, "window_id": window, "include_screenshot": False, "include_elements": True})
                return next(
                    (e.get("value") for e in s["structured"]["elements"] if e["role"] == "text" and "editable" in e["states"]),
                    None,
                )

            for _ in range(50):
                seen["display_after_clicks"] = await display()
                if seen["display_after_clicks"] == "42":
                    break
                await asyncio.sleep(0.1)
            # Start over and replay: 7 starts a new calculation, the recording adds × 6 =.
            # Indices belong to the latest snapshot (the result added a history row): re-read.
            state = await call("get_window_state", {"pid": pid, "window_id": window, "include_screenshot": False, "include_elements": True})
            index = {e["name"]: e["element_index"] for e in state["structured"]["elements"]}
            await press("7")
            for _ in range(50):
                seen["display_before_replay"] = await display()
                if seen["display_before_replay"] == "7":
                    break
                await asyncio.sleep(0.1)
            seen["replay"] = await call("replay_trajectory", {"dir": recording, "delay_ms": 0})
            for _ in range(50):
                seen["display_after_replay"] = await display()
                if seen["display_after_replay"] == "42":
                    break
                await asyncio.sleep(0.1)
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
