import { createHash } from "node:crypto";
import { VIEWER_LIST_SCRIPT } from "./viewerListScript.js";
import { VIEWER_RUN_SCRIPT } from "./viewerRunScript.js";
import { VIEWER_STYLE } from "./viewerStyle.js";

const SCRIPT = VIEWER_LIST_SCRIPT + VIEWER_RUN_SCRIPT;

/**
 * The run viewer's one page: self-contained (no outside assets), read-only. It reads `/api/runs`, `/api/runs/<id>`
 * and `/api/facets`, and builds the DOM with `textContent` only, so nothing a model or a tool wrote can run as code.
 */
export const VIEWER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>lllm runs</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${VIEWER_STYLE}</style>
</head>
<body>
<header>
  <h1>lllm runs</h1>
  <input id="q" type="search" placeholder="search inputs and outputs" aria-label="search inputs and outputs">
  <select id="tactic" aria-label="tactic"><option value="">any tactic</option></select>
  <select id="status" aria-label="status"><option value="">any status</option><option>ok</option><option>error</option><option>budget</option><option>interrupted</option><option>crashed</option><option>running</option></select>
  <select id="batch" aria-label="batch"><option value="">any batch</option><option value="none">not in a batch</option></select>
  <select id="test" aria-label="test cases"><option value="">any run</option><option value="any">test cases</option><option value="failed">failed test cases</option><option value="passed">passed test cases</option></select>
  <label>from <input id="from" type="date"></label>
  <label>to <input id="to" type="date"></label>
  <button id="clear" type="button">Clear</button>
  <button id="refresh" type="button">Refresh</button>
</header>
<main>
  <section id="list">
    <div id="runs"><table>
      <colgroup><col class="when"><col class="what"><col class="status"><col class="tokens"><col class="cost"><col class="duration"></colgroup>
      <thead><tr><th>when</th><th>tactic · model · input</th><th>status</th><th class="number">tokens</th><th class="number">cost</th><th class="number">duration</th></tr></thead>
      <tbody id="run-rows"></tbody>
    </table></div>
    <nav id="pager"><span class="count" id="count"></span>
      <button id="newest" type="button" title="the newest runs">« Newest</button><button id="newer" type="button">‹ Newer</button><button id="older" type="button">Older ›</button><button id="oldest" type="button" title="the oldest runs">Oldest »</button></nav>
  </section>
  <section id="detail"><p class="empty">Select a run.</p></section>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;

const hash = (text: string): string => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/**
 * The page's Content-Security-Policy: its own script and style sheet (by hash: no other inline code runs), requests
 * to this server only, no outside assets, no framing, no form posts.
 */
export const VIEWER_PAGE_POLICY = `default-src 'none'; script-src ${hash(SCRIPT)}; style-src ${hash(VIEWER_STYLE)}; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
