/**
 * The list half of the viewer page's script (plain browser JavaScript in a template string: no backticks, no
 * dollar-brace, and each backslash written twice). The page's address is its state: `/runs/<id>` is the open run, the query holds
 * the filters and the page of the list (`q`, `tactic`, `status`, `batch`, `from`, `to` as dates, `before`/`after`
 * a run id), so every view has a link, and Back and Forward work. The DOM is built with `textContent` only:
 * nothing a model or a tool wrote can run as code.
 */
export const VIEWER_LIST_SCRIPT = `
"use strict";
const $ = (id) => document.getElementById(id);
const PAGE_SIZE = 50;
const LIST_KEYS = ["q", "tactic", "status", "batch", "test", "from", "to", "before", "after"];

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "style") for (const [property, setting] of Object.entries(value)) node.style.setProperty(property, setting);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child instanceof Node ? child : String(child));
  return node;
}

// As formatCost (src/store/RunTally.ts) writes it: never in exponent notation.
const cost = (value) => value === null || value === undefined ? "-" : value === 0 ? "$0" : value < 0.0001 ? "<$0.0001" : value >= 0.995 ? "$" + value.toFixed(2) : "$" + value.toPrecision(2);
const duration = (ms) => ms === null || ms === undefined ? "-" : ms < 10 && !Number.isInteger(ms) ? ms.toFixed(1) + " ms" : ms < 1000 ? Math.round(ms) + " ms" : ms < 60000 ? (ms / 1000).toFixed(1) + " s" : Math.floor(ms / 60000) + "m" + String(Math.round((ms % 60000) / 1000)).padStart(2, "0") + "s";
const count = (n) => n < 10000 ? n.toLocaleString("en-US") : n < 1e6 ? Math.round(n / 1000) + "k" : (n / 1e6).toFixed(1) + "M";
const pad = (n) => String(n).padStart(2, "0");
const fullTime = (ms) => { const d = new Date(ms); return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()); };
const shortTime = (ms) => new Date(ms).toLocaleString("en-US", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
// Local midnight of a YYYY-MM-DD date, or of the day after it (a day is not always 24 hours long).
const dayStart = (text, after = 0) => { const [y, m, d] = text.split("-").map(Number); return new Date(y, m - 1, d + after).getTime(); };
const tokensOf = (item) => (item.prompt_tokens || 0) + (item.completion_tokens || 0);
const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");

// The address: which run is open, and the list's filters and page.
function runOfPath() {
  const match = /^[/]runs[/]([^/]+)$/.exec(location.pathname);
  if (!match) return null;
  // A malformed escape (a hand-typed /runs/%E0) names no run; thrown, it stopped the page before the list showed.
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}
function listParams() {
  const params = new URLSearchParams();
  const current = new URLSearchParams(location.search);
  for (const key of LIST_KEYS) if (current.has(key) && (current.get(key) !== "" || key === "after")) params.set(key, current.get(key));
  return params;
}
function address(run, params) {
  const query = params.toString();
  return (run ? "/runs/" + encodeURIComponent(run) : "/") + (query ? "?" + query : "");
}
function go(run, params) {
  const next = address(run, params);
  if (next === location.pathname + location.search) history.replaceState(null, "", next);
  else history.pushState(null, "", next);
  render();
}

// The list.
let listShown = null;
async function loadList() {
  const params = listParams();
  const key = params.toString();
  listShown = key;
  const api = new URLSearchParams({ n: String(PAGE_SIZE) });
  for (const name of ["q", "tactic", "status", "batch", "test", "before", "after"]) if (params.has(name)) api.set(name, params.get(name));
  if (params.get("from")) api.set("since", String(dayStart(params.get("from"))));
  if (params.get("to")) api.set("until", String(dayStart(params.get("to"), 1)));
  let page;
  try {
    const response = await fetch("/api/runs?" + api);
    page = await response.json();
    if (!response.ok) throw new Error(page.error || response.statusText);
  } catch (error) {
    if (listShown === key) $("run-rows").replaceChildren(el("tr", {}, el("td", { class: "problem", colspan: "6" }, "The list could not be read: " + error.message)));
    return;
  }
  if (listShown !== key) return;
  const open = runOfPath();
  $("run-rows").replaceChildren(...page.runs.map((run) => runRow(run, params, open)));
  if (page.runs.length === 0) $("run-rows").replaceChildren(el("tr", {}, el("td", { class: "empty", colspan: "6" }, page.total === 0 && !filtered(params) ? "No runs logged yet." : "No runs match.")));
  const first = page.offset + 1;
  const last = page.offset + page.runs.length;
  $("count").textContent = page.runs.length === 0 ? plural(page.total, "run") : first.toLocaleString("en-US") + "–" + last.toLocaleString("en-US") + " of " + plural(page.total, "run").replace(/^[0-9]+/, page.total.toLocaleString("en-US"));
  const newer = page.offset > 0;
  const older = last < page.total;
  $("newest").disabled = !newer;
  $("newer").disabled = !newer;
  $("older").disabled = !older;
  $("oldest").disabled = !older;
  $("newer").onclick = () => go(runOfPath(), withCursor("after", page.runs[0] && page.runs[0].id));
  $("older").onclick = () => go(runOfPath(), withCursor("before", page.runs[page.runs.length - 1] && page.runs[page.runs.length - 1].id));
}
function filtered(params) {
  return ["q", "tactic", "status", "batch", "test", "from", "to"].some((key) => params.has(key));
}
function withCursor(name, value) {
  const params = listParams();
  params.delete("before");
  params.delete("after");
  if (name) params.set(name, value || "");
  return params;
}
// A test case's run: its mark (passed, failed, or not decided yet) and the case's name.
function testMark(run) {
  const mark = run.test_status === "passed" ? "✓" : run.test_status === "failed" ? "✗" : "…";
  return el("span", { class: "test " + (run.test_status || "undecided") }, mark + " " + run.test_case + " · ");
}
function runRow(run, params, open) {
  const link = address(run.id, params);
  const follow = (event) => {
    if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    go(run.id, listParams());
  };
  return el("tr", { class: "run" + (run.id === open ? " selected" : ""), "data-id": run.id, onclick: follow },
    el("td", { title: fullTime(run.started_at) }, el("a", { href: link, class: "run-link" }, shortTime(run.started_at))),
    el("td", { title: (run.test_case !== null ? "test case " + run.test_case + " (" + (run.test_status || "not decided") + ")\\n" : "") + (run.tactic_name || "-") + " · " + (run.models.join(", ") || "-") + "\\n" + (run.input || "") },
      run.test_case !== null ? testMark(run) : null,
      el("span", { class: "tactic" }, run.tactic_name || "-"), el("span", { class: "model" }, " · " + (run.models.join(", ") || "-")), el("span", { class: "preview" }, run.input || "")),
    el("td", { class: "status " + run.status }, run.status),
    el("td", { class: "number", title: run.prompt_tokens + " + " + run.completion_tokens }, count(tokensOf(run))),
    el("td", { class: "number" }, cost(run.cost)),
    el("td", { class: "number" }, duration(run.duration_ms)));
}
`;
