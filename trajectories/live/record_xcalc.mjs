// Records xcalc-live as a person does in cua's live page (`cua record --live`): the
// recorder launches xcalc (Xaw: no accessibility tree, so every click is a pixel turn),
// and this script sends the page's own events over its WebSocket, as the page does when a
// person clicks in the picture and types: a click on 7, "*" typed, a click on 6, "=" typed.
// Where 7 and 6 are on the screen is read by OCR through `cua get_window_state`, as a
// person would see them. Then it saves the recording as the scenario `xcalc-live`
// (harness/xcalc-live.toml) and stops the recorder (Ctrl-C), which stops xcalc.
//
// Usage, from the project root, inside a desktop (e.g. after `eval "$(cua sandbox start)"`):
//   node --experimental-websocket trajectories/live/record_xcalc.mjs target/release/cua
import { spawn, execFileSync } from "node:child_process";
import readline from "node:readline";

const cua = process.argv[2];
const display = (process.env.DISPLAY || "").replace(/^:/, "");
if (!cua || !display) {
  console.error("usage: node --experimental-websocket record_xcalc.mjs CUA (inside a desktop)");
  process.exit(2);
}
const tool = (name, args) =>
  JSON.parse(execFileSync(cua, [name, JSON.stringify(args), "--json"], { encoding: "utf8" }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const recorder = spawn(
  cua,
  ["record", "--live", "trajectories/live/xcalc", "--app", "xcalc", "--display", display],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const lines = readline.createInterface({ input: recorder.stdout });
const first = await new Promise((resolve) => lines.once("line", resolve));
const url = first.replace("record by doing in the browser: ", "");
const page = await (await fetch(url)).text();
const port = page.split("new WebSocket(`ws://${location.hostname}:")[1].split("`")[0];
const ws = new WebSocket(`ws://127.0.0.1:${port}`);
const messages = [];
let waiting = null;
ws.onmessage = (m) => {
  if (typeof m.data !== "string") return; // a frame of the screen
  messages.push(JSON.parse(m.data));
  if (waiting) waiting();
};
await new Promise((resolve) => (ws.onopen = resolve));
// The next message that is not a frame (bounded).
async function next() {
  const deadline = Date.now() + 30000;
  while (messages.length === 0) {
    if (Date.now() > deadline) throw new Error("the page sent nothing in 30 s");
    await new Promise((resolve) => {
      waiting = resolve;
      setTimeout(resolve, 500);
    });
  }
  return messages.shift();
}
async function send(event) {
  ws.send(JSON.stringify(event));
  const answer = await next();
  if (answer.kind !== "turn") throw new Error(`${JSON.stringify(event)}: ${JSON.stringify(answer)}`);
  console.log(`turn: ${answer.tool} ${answer.target ?? ""}`);
}

// xcalc's window, and where OCR reads 7 and 6 on the screen.
let window = null;
for (let i = 0; i < 50 && !window; i++) {
  window = tool("list_windows", {}).windows.find((w) => w.app_name === "xcalc" || w.title === "Calculator");
  if (!window) await sleep(200);
}
const state = tool("get_window_state", { pid: window.pid, window_id: window.window_id });
const centre = (name) => {
  const e = state.elements.find((e) => e.role === "ocr_text" && e.name === name);
  if (!e) throw new Error(`OCR does not read ${name}: ${state.tree_markdown}`);
  return { x: e.frame.x + e.frame.w / 2, y: e.frame.y + e.frame.h / 2 };
};
const seven = centre("7");
const six = centre("6");

await send({ kind: "click", ...seven });
await send({ kind: "type", text: "*" });
await send({ kind: "click", ...six });
await send({ kind: "type", text: "=" });
ws.send(JSON.stringify({ kind: "save", name: "xcalc-live" }));
console.log(JSON.stringify(await next()));
ws.close();
recorder.kill("SIGINT");
await new Promise((resolve) => recorder.on("exit", resolve));
