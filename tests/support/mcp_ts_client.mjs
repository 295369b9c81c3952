// Drives `cua mcp` over stdio with the official MCP TypeScript SDK
// (npm @modelcontextprotocol/sdk), as an agent would: connect, list tools (every input
// schema compiled with Ajv), launch the calculator, get_window_state (an image block must
// arrive), click by element index, record a few clicks, stop, replay the recording.
// Prints one JSON object of what it saw.
// Usage: node mcp_ts_client.mjs CUA_BINARY RECORDING_DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const [cua, recording] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: cua, args: ["mcp"], env: process.env });
const client = new Client({ name: "cua-ts-test", version: "1.0.0" });
await client.connect(transport);
const seen = { server: client.getServerVersion().name };

const { tools } = await client.listTools();
seen.tools = tools.map((t) => t.name).sort();
const ajv = new Ajv({ strict: false });
for (const t of tools) ajv.compile(t.inputSchema);
const outputSchemas = Object.fromEntries(tools.filter((t) => t.outputSchema).map((t) => [t.name, ajv.compile(t.outputSchema)]));
seen.output_schemas = Object.keys(outputSchemas).sort();
seen.read_only = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name).sort();

const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return {
    is_error: Boolean(r.isError),
    types: r.content.map((c) => c.type),
    text: r.content[0]?.type === "text" ? r.content[0].text : "",
    structured: r.structuredContent,
    image_bytes: r.content.filter((c) => c.type === "image").reduce((n, c) => n + c.data.length, 0),
  };
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const launched = await call("launch_app", { name: "Calculator" });
const pid = launched.structured.pid;
const window = launched.structured.windows[0].window_id;
const readIndex = async () => {
  const s = await call("get_window_state", { pid, window_id: window, include_elements: true });
  return [s, Object.fromEntries(s.structured.elements.map((e) => [e.name, e.element_index]))];
};
let [state, index] = await readIndex();
seen.state_types = state.types;
seen.image_bytes = state.image_bytes;
const press = (key) => call("click", { pid, window_id: window, element_index: index[key] });
const display = async () => {
  const s = await call("get_window_state", { pid, window_id: window, include_screenshot: false, include_elements: true });
  return s.structured.elements.find((e) => e.role === "text" && e.states.includes("editable"))?.value;
};
const waitFor = async (want) => {
  let shown;
  for (let i = 0; i < 50; i++) {
    shown = await display();
    if (shown === want) break;
    await sleep(100);
  }
  return shown;
};

seen.first_click = await press("7");
seen.bad_call = await call("click", { pid: "seven" });
// Both the result and the error conform to click's declared output schema.
seen.output_valid = [seen.first_click, seen.bad_call].map((r) => outputSchemas.click(r.structured));
seen.record_on = await call("set_recording", { enabled: true, output_dir: recording });
for (const key of ["×", "6", "="]) await press(key);
seen.record_off = await call("set_recording", { enabled: false });
seen.display_after_clicks = await waitFor("42");
[state, index] = await readIndex();
await press("7");
seen.display_before_replay = await waitFor("7");
seen.replay = await call("replay_trajectory", { dir: recording, delay_ms: 0 });
seen.display_after_replay = await waitFor("42");
await client.close();
console.log(JSON.stringify(seen));
