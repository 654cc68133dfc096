/**
 * The run viewer's one page: self-contained (no outside assets), read-only. It reads `/api/runs` and
 * `/api/runs/<id>` and builds the DOM with `textContent` only, so nothing a model or a tool wrote can run as code.
 */
export const VIEWER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lllm runs</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { --bg: #fafafa; --fg: #1d1d1f; --dim: #6e6e73; --line: #e3e3e8; --model: #4f7cff; --tool: #1fa37a; --error: #d93d3d; --card: #fff; }
  @media (prefers-color-scheme: dark) { :root { --bg: #16171a; --fg: #e8e8ea; --dim: #9a9aa2; --line: #2c2d33; --card: #1e1f24; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
  header { display: flex; gap: 12px; align-items: center; padding: 12px 20px; border-bottom: 1px solid var(--line); background: var(--card); position: sticky; top: 0; }
  header h1 { font-size: 16px; margin: 0 12px 0 0; }
  input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
  main { display: grid; grid-template-columns: minmax(420px, 40%) 1fr; height: calc(100vh - 57px); }
  #runs { overflow: auto; border-right: 1px solid var(--line); }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
  th { font-weight: 600; color: var(--dim); font-size: 12px; position: sticky; top: 0; background: var(--bg); }
  tr.run { cursor: pointer; }
  tr.run:hover, tr.run.selected { background: color-mix(in srgb, var(--model) 10%, transparent); }
  .status { font-weight: 600; }
  .status.ok { color: var(--tool); } .status.error, .status.crashed, .status.budget { color: var(--error); } .status.running, .status.interrupted { color: var(--dim); }
  #detail { overflow: auto; padding: 16px 20px; }
  .meta { color: var(--dim); margin: 4px 0 14px; }
  .timeline { position: relative; border-left: 1px solid var(--line); margin: 12px 0; }
  .step { position: relative; height: 26px; margin: 3px 0; cursor: pointer; }
  .bar { position: absolute; top: 3px; height: 20px; border-radius: 4px; min-width: 3px; }
  .step.model .bar { background: var(--model); } .step.tool .bar { background: var(--tool); } .step.failed .bar { background: var(--error); }
  .label { position: absolute; top: 3px; white-space: nowrap; font-size: 12px; line-height: 20px; padding-left: 6px; }
  .step:hover .label { text-decoration: underline; }
  .panel { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px; margin-top: 12px; }
  .panel h3 { margin: 0 0 8px; font-size: 14px; }
  pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0 10px; padding: 8px; background: var(--bg); border-radius: 6px; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
  .role { font-size: 12px; color: var(--dim); text-transform: uppercase; letter-spacing: .04em; }
  .empty { color: var(--dim); padding: 20px; }
</style>
</head>
<body>
<header>
  <h1>lllm runs</h1>
  <input id="search" type="search" placeholder="search inputs and outputs">
  <input id="tactic" placeholder="tactic">
  <select id="status"><option value="">any status</option><option>ok</option><option>error</option><option>budget</option><option>interrupted</option><option>crashed</option><option>running</option></select>
  <button id="refresh">Refresh</button>
</header>
<main>
  <section id="runs"><table><thead><tr><th>when</th><th>tactic</th><th>status</th><th>model</th><th>tokens</th><th>cost</th><th>duration</th></tr></thead><tbody id="run-rows"></tbody></table></section>
  <section id="detail"><p class="empty">Select a run.</p></section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "class") node.className = value; else if (key.startsWith("on")) node.addEventListener(key.slice(2), value); else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  return node;
}
const cost = (value) => value === null || value === undefined ? "-" : value === 0 ? "$0" : value >= 1 ? "$" + value.toFixed(2) : "$" + value.toPrecision(2);
const duration = (ms) => ms === null || ms === undefined ? "-" : ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(1) + " s";
const when = (ms) => new Date(ms).toLocaleString();
let selected = null;

async function loadRuns() {
  const query = new URLSearchParams({ n: "200" });
  for (const key of ["search", "tactic", "status"]) if ($(key).value) query.set(key, $(key).value);
  const response = await fetch("/api/runs?" + query);
  const runs = await response.json();
  const rows = $("run-rows");
  rows.replaceChildren(...runs.map((run) => el("tr", { class: "run" + (run.id === selected ? " selected" : ""), "data-id": run.id, onclick: () => showRun(run.id) },
    el("td", {}, when(run.started_at)), el("td", {}, run.tactic_name || "-"), el("td", { class: "status " + run.status }, run.status),
    el("td", {}, (run.models || []).join(", ")), el("td", {}, run.prompt_tokens + run.completion_tokens), el("td", {}, cost(run.cost)), el("td", {}, duration(run.duration_ms)))));
  if (runs.length === 0) rows.replaceChildren(el("tr", {}, el("td", { class: "empty", colspan: "7" }, "No runs.")));
}

function messageBlock(message) {
  const text = message.content || (message.toolCalls || []).map((call) => call.name + "(" + call.arguments + ")").join("\\n");
  return [el("div", { class: "role" }, message.role + (message.name ? " · " + message.name : "")), el("pre", {}, text)];
}

async function showRun(id) {
  selected = id;
  for (const row of document.querySelectorAll("tr.run")) row.classList.toggle("selected", row.dataset.id === id);
  const run = await (await fetch("/api/runs/" + encodeURIComponent(id))).json();
  const detail = $("detail");
  const steps = [
    ...run.model_calls.map((call) => ({ kind: "model", start: call.started_at, ms: call.latency_ms || 0, call })),
    ...run.tool_calls.map((call) => ({ kind: "tool", start: call.ended_at - (call.duration_ms || 0), ms: call.duration_ms || 0, call })),
  ].sort((a, b) => a.call.step - b.call.step);
  const origin = run.started_at;
  const end = Math.max(run.ended_at || 0, ...steps.map((step) => step.start + step.ms), origin + 1);
  const span = end - origin;
  const panel = el("div", { class: "panel", id: "step-detail" }, el("p", { class: "empty" }, "Click a bar to see its messages, arguments and result."));
  const timeline = el("div", { class: "timeline", id: "timeline" }, ...steps.map((step, index) => {
    const left = ((step.start - origin) / span) * 70;
    const width = Math.max(0.4, (step.ms / span) * 70);
    const failed = step.kind === "tool" && step.call.status === "error";
    const label = step.kind === "model"
      ? "chat " + (step.call.model || "") + " · " + duration(step.ms) + " · " + (step.call.prompt_tokens + step.call.completion_tokens) + " tokens · " + cost(step.call.cost)
      : step.call.name + " · " + duration(step.ms) + " · " + step.call.status;
    return el("div", { class: "step " + step.kind + (failed ? " failed" : ""), "data-kind": step.kind, "data-index": String(index), title: label, onclick: () => showStep(panel, step) },
      el("div", { class: "bar", style: "left:" + left + "%;width:" + width + "%" }), el("div", { class: "label", style: "left:" + (left + width) + "%" }, label));
  }));
  detail.replaceChildren(
    el("h2", {}, (run.tactic_name || "run") + " · ", el("span", { class: "status " + run.status }, run.status)),
    el("div", { class: "meta" }, run.id + " · " + when(run.started_at) + " · " + duration(run.duration_ms) + " · " + (run.prompt_tokens + run.completion_tokens) + " tokens · " + cost(run.cost) + " · " + (run.models || []).join(", ")),
    el("div", { class: "role" }, "input"), el("pre", { id: "run-input" }, run.input || ""),
    timeline, panel,
    run.error_message ? el("div", {}, el("div", { class: "role" }, "error " + (run.error_code || "")), el("pre", {}, run.error_message)) : el("div", {}, el("div", { class: "role" }, "output"), el("pre", { id: "run-output" }, typeof run.output === "string" ? run.output : JSON.stringify(run.output, null, 2))),
  );
}

function showStep(panel, step) {
  if (step.kind === "model") {
    const call = step.call;
    panel.replaceChildren(el("h3", {}, "Model call " + (call.seq + 1) + " · " + call.agent + " · round " + (call.round + 1)),
      el("div", { class: "meta" }, (call.model || "") + " · " + duration(call.latency_ms) + " · " + call.prompt_tokens + " + " + call.completion_tokens + " tokens · " + cost(call.cost)),
      ...call.messages.flatMap(messageBlock),
      el("div", { class: "role" }, "reply"), el("pre", {}, call.reply || (call.tool_calls || []).map((request) => request.name + "(" + request.arguments + ")").join("\\n")));
  } else {
    const call = step.call;
    panel.replaceChildren(el("h3", {}, "Tool " + call.name + " · " + call.status + " · " + duration(call.duration_ms)),
      el("div", { class: "role" }, "arguments"), el("pre", { id: "tool-arguments" }, JSON.stringify(call.arguments, null, 2)),
      el("div", { class: "role" }, call.error ? "error" : "result"), el("pre", { id: "tool-result" }, call.error || call.result || ""));
  }
}

for (const id of ["search", "tactic", "status"]) $(id).addEventListener("change", loadRuns);
$("search").addEventListener("keyup", (event) => { if (event.key === "Enter") loadRuns(); });
$("refresh").addEventListener("click", loadRuns);
loadRuns();
</script>
</body>
</html>
`;
