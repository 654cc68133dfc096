import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The documentation shipped with lllm (docs/, beside package.json): the topics are its pages, so they never drift. */
export const DOCS = fileURLToPath(new URL("../../docs/", import.meta.url));

/** A topic of `lllm help`: its page (under docs/) and what it is about. */
export interface HelpTopic {
  page: string;
  what: string;
}

/**
 * The topics of `lllm help TOPIC`, in the index's order: every page the index (docs/README.md) lists on a line of
 * its own, `- [Title](page.md): what it is about`, named after its file (`reference/cli.md` is `cli`). Adding a
 * page to the index adds the topic.
 */
export function helpTopics(index = readIndex()): Record<string, HelpTopic> {
  const topics: Record<string, HelpTopic> = {};
  for (const match of index.matchAll(/^- \[[^\]]+\]\(([^)#\s]+\.md)\): (.+)$/gm)) {
    const page = match[1]!;
    topics[path.posix.basename(page, ".md")] = { page, what: match[2]!.trim() };
  }
  return topics;
}

function readIndex(): string {
  try {
    return readFileSync(path.join(DOCS, "README.md"), "utf8");
  } catch {
    return ""; // a copy without its docs/: commands' help still works
  }
}

export interface Styles {
  bold: (text: string) => string;
  dim: (text: string) => string;
}

/**
 * Markdown for a terminal: code blocks indented, headings and `**bold**` in bold, a link's text with where it leads
 * (another page: its `lllm help` topic; a web address: the address; a heading of the page: nothing), HTML comments
 * and anchors left out, the entities a table escapes (`&lt;`, `\|`) as the characters they stand for.
 */
export function renderMarkdown(markdown: string, styles: Styles, topics: Record<string, HelpTopic> = {}): string {
  const out: string[] = [];
  let prose: string[] = [];
  // Prose is rendered a paragraph at a time: a link's text may run over two lines.
  const flush = (): void => {
    for (const line of inline(prose.join("\n"), styles, topics).split("\n")) out.push(/^#{1,6} /.test(line) ? styles.bold(line.replace(/^#+ /, "")) : line);
    prose = [];
  };
  let fence: string | undefined;
  let indent = "";
  for (const line of markdown.replace(/<!--[\s\S]*?-->\n?/g, "").split("\n")) {
    const marker = /^(\s*)(`{3,}|~{3,})/.exec(line);
    if (marker && (fence === undefined || line.trim() === fence)) {
      if (fence === undefined) flush();
      // A block in a list item is indented with it: its lines are shown from the fence's column.
      [fence, indent] = fence === undefined ? [marker[2]!, marker[1]!] : [undefined, ""];
      continue;
    }
    if (fence !== undefined) out.push(`    ${line.startsWith(indent) ? line.slice(indent.length) : line}`);
    else prose.push(line);
  }
  flush();
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

function inline(text: string, styles: Styles, topics: Record<string, HelpTopic>): string {
  return text
    .replace(/<a\s+(?:id|name)="[^"]*"><\/a>/g, "")
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_match, label: string, target: string) => `${label}${linkNote(target, topics)}`)
    .replace(/\*\*([^*]+)\*\*/g, (_match, bold: string) => styles.bold(bold))
    .replace(/\\\|/g, "|")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** Where a link leads, for a reader who cannot click: ` (lllm help batch)`, ` (https://…)`, or nothing. */
function linkNote(target: string, topics: Record<string, HelpTopic>): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return ` (${target})`;
  const file = target.split("#")[0]!;
  if (file === "") return "";
  const topic = path.posix.basename(file, ".md");
  return Object.hasOwn(topics, topic) ? ` (lllm help ${topic})` : "";
}

/** The guide `lllm help TOPIC` prints: the topic's page cut for a terminal, or undefined for an unknown topic. */
export function topicGuide(topic: string, styles: Styles, topics = helpTopics()): string | undefined {
  if (!Object.hasOwn(topics, topic)) return undefined;
  const file = path.join(DOCS, topics[topic]!.page);
  let page: string;
  try {
    page = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  // The page's title is the first line already (`lllm help batch: …`): the body starts after it.
  const body = page.replace(/^# .*\n/, "");
  return `${styles.bold(`lllm help ${topic}`)}: ${topics[topic]!.what}\n\n${renderMarkdown(body, styles, topics)}\n\n${styles.dim(`The page: ${file}`)}\n`;
}
