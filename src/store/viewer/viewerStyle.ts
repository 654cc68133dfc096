/**
 * The viewer page's style sheet. Nothing in it may make the page wider than the window: the list's columns are
 * fixed (long names end in an ellipsis), the detail never scrolls sideways, and the timeline's labels sit in a
 * column of their own instead of beside bars that can reach the right edge.
 */
export const VIEWER_STYLE = `
:root { --bg: #f7f7f9; --fg: #1d1d1f; --dim: #6e6e73; --line: #e3e3e8; --card: #fff; --hover: #eef2ff;
  --model: #4f7cff; --tool: #1fa37a; --program: #8a5cf6; --error: #d93d3d; --warn: #c77c02; }
@media (prefers-color-scheme: dark) { :root { --bg: #16171a; --fg: #e8e8ea; --dim: #9a9aa2; --line: #2c2d33; --card: #1e1f24; --hover: #262a3a; } }
* { box-sizing: border-box; }
html, body { height: 100%; }
body { margin: 0; display: flex; flex-direction: column; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
a { color: var(--model); text-decoration: none; }
a:hover { text-decoration: underline; }
header { flex: none; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--card); }
header h1 { font-size: 16px; margin: 0 8px 0 0; white-space: nowrap; }
header label { display: flex; align-items: center; gap: 4px; color: var(--dim); font-size: 12px; }
input, select, button { font: inherit; font-size: 13px; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
#q { width: 190px; }
select { max-width: 170px; }
button { cursor: pointer; }
button:disabled { cursor: default; opacity: .45; }
main { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(620px, 46%) minmax(0, 1fr); }
#list { display: flex; flex-direction: column; min-width: 0; min-height: 0; border-right: 1px solid var(--line); }
#runs { flex: 1; min-height: 0; overflow-y: auto; overflow-x: hidden; }
table { border-collapse: collapse; width: 100%; }
#runs table { table-layout: fixed; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; vertical-align: top; }
th { font-weight: 600; color: var(--dim); font-size: 12px; position: sticky; top: 0; background: var(--bg); z-index: 1; }
th.number, td.number { text-align: right; }
#runs td { font-size: 13px; }
col.when { width: 132px; } col.status { width: 84px; } col.tokens { width: 64px; } col.cost { width: 86px; } col.duration { width: 80px; }
tr.run { cursor: pointer; }
tr.run:hover { background: var(--hover); }
tr.run.selected { background: color-mix(in srgb, var(--model) 16%, transparent); }
tr.run td a { color: inherit; }
.tactic { font-weight: 600; }
.test.passed { color: var(--tool); } .test.failed { color: var(--error); font-weight: 600; } .test.undecided { color: var(--dim); }
.model { color: var(--dim); font-size: 12px; }
.preview { display: block; color: var(--dim); font-size: 12px; overflow: hidden; text-overflow: ellipsis; }
.status { font-weight: 600; }
.status.ok { color: var(--tool); } .status.error, .status.crashed, .status.budget, .status.denied, .status.timeout, .status.unknown_tool, .status.budget_exceeded, .status.no_answer { color: var(--error); } .status.running, .status.interrupted, .status.replayed, .status.repeated { color: var(--dim); }
#pager { flex: none; display: flex; gap: 6px; align-items: center; padding: 8px 12px; border-top: 1px solid var(--line); background: var(--card); }
#pager .count { flex: 1; color: var(--dim); font-size: 13px; }
#detail { min-width: 0; min-height: 0; overflow-y: auto; overflow-x: hidden; padding: 14px 20px 40px; }
#detail h2 { margin: 0 0 4px; font-size: 18px; overflow-wrap: anywhere; }
.meta { color: var(--dim); margin: 2px 0 12px; font-size: 13px; overflow-wrap: anywhere; }
.meta a { cursor: pointer; }
.section { margin: 16px 0 6px; font-size: 12px; color: var(--dim); text-transform: uppercase; letter-spacing: .04em; font-weight: 600; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 10px; padding: 8px 10px; background: var(--card); border: 1px solid var(--line); border-radius: 6px; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; max-height: 480px; overflow-y: auto; }
pre.error { border-color: color-mix(in srgb, var(--error) 45%, var(--line)); }
.legend { display: flex; gap: 14px; color: var(--dim); font-size: 12px; margin-bottom: 4px; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; background: var(--swatch); }
.timeline { border: 1px solid var(--line); border-radius: 8px; background: var(--card); padding: 4px 0; }
.step { display: grid; grid-template-columns: minmax(0, 42%) minmax(0, 1fr); align-items: center; height: 26px; cursor: pointer; }
.step:hover, .step.active { background: var(--hover); }
.step .label { display: flex; gap: 6px; min-width: 0; padding: 0 8px 0 10px; font-size: 12px; white-space: nowrap; }
.step .label .text { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
.step .label .time { flex: none; color: var(--dim); }
.step.nested .label { padding-left: 26px; }
.step.resume { border-top: 2px dashed var(--warn); } .step.resume .kind { color: var(--warn); }
.kind { font-weight: 600; }
.step.model .kind { color: var(--model); } .step.tool .kind { color: var(--tool); } .step.program .kind { color: var(--program); }
.track { position: relative; height: 100%; margin-right: 10px; }
.bar { position: absolute; top: 6px; height: 14px; border-radius: 3px; min-width: 3px; }
.step.model .bar { background: var(--model); } .step.tool .bar { background: var(--tool); } .step.program .bar { background: var(--program); } .step.failed .bar { background: var(--error); }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; margin-top: 10px; min-width: 0; }
.panel.highlight { border-color: var(--program); box-shadow: 0 0 0 2px color-mix(in srgb, var(--program) 25%, transparent); }
.panel h3 { margin: 0 0 4px; font-size: 14px; overflow-wrap: anywhere; }
.role { font-size: 11px; color: var(--dim); text-transform: uppercase; letter-spacing: .04em; margin-top: 8px; }
.role .name, .section .name { text-transform: none; letter-spacing: 0; }
details > summary { cursor: pointer; color: var(--dim); font-size: 12px; margin: 6px 0; }
.calls { max-height: 300px; overflow-y: auto; border: 1px solid var(--line); border-radius: 6px; }
.calls table { table-layout: fixed; font-size: 12px; }
.calls th { background: var(--card); }
.calls col.index { width: 44px; } .calls col.tool { width: 30%; } .calls col.state { width: 90px; } .calls col.ms { width: 76px; }
.calls td.error { color: var(--error); white-space: normal; overflow-wrap: anywhere; }
.digest { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; color: var(--dim); }
.empty { color: var(--dim); padding: 16px; }
.panel .empty { padding: 2px 0; margin: 0; }
.tally { font-size: 12px; color: var(--dim); margin-top: 8px; }
.problem { color: var(--error); padding: 16px; }
`;
