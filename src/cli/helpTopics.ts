import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** `lllm help TOPIC`: the topics, and what each is about (for the list). */
export const HELP_TOPICS: Readonly<Record<string, string>> = {
  tactics: "tactic files: agents, prompts, tools, base files, project settings",
  packages: "package folders: tools, prompts, tactics, proxies; refs",
  proxies: "data APIs behind CALL_API, run_python and the sandbox",
  "code-action": "one Python program over the agent's tools",
  batch: "one tactic over a dataset; resume, limits, Redis workers",
  testing: "offline runs: scripted models, replays of logged runs, mock servers",
};

/** The README shipped with lllm (beside package.json): the guides are its own text, so they never drift from it. */
export const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/**
 * A topic's guide: the parts of the README marked `<!-- help:TOPIC -->` … `<!-- /help:TOPIC -->`, in order, as
 * plain Markdown, and the heading of the section the first part is in (where to read on).
 */
export function topicMarkdown(readme: string, topic: string): { text: string; section: string } | undefined {
  const lines = readme.split("\n");
  const parts: string[][] = [];
  let section = "";
  let heading = "";
  let inside: string[] | undefined;
  for (const line of lines) {
    if (/^#{1,3} /.test(line) && inside === undefined) heading = line.replace(/^#+ /, "");
    if (line.trim() === `<!-- help:${topic} -->`) {
      inside = [];
      if (parts.length === 0) section = heading;
    } else if (line.trim() === `<!-- /help:${topic} -->` && inside !== undefined) {
      parts.push(inside);
      inside = undefined;
    } else if (inside !== undefined) inside.push(line);
  }
  if (parts.length === 0) return undefined;
  return { text: parts.map((part) => part.join("\n").trim()).join("\n\n"), section };
}

export interface Styles {
  bold: (text: string) => string;
  dim: (text: string) => string;
}

/** Markdown for a terminal: code blocks indented, `**bold**` in bold, headings in bold; the rest as written. */
export function renderMarkdown(markdown: string, styles: Styles): string {
  const out: string[] = [];
  let code = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) {
      code = !code;
      continue;
    }
    if (code) out.push(`    ${line}`);
    else if (/^#{1,6} /.test(line)) out.push(styles.bold(line.replace(/^#+ /, "")));
    else out.push(line.replace(/\*\*([^*]+)\*\*/g, (_match, text: string) => styles.bold(text)));
  }
  return out.join("\n");
}

/** The guide `lllm help TOPIC` prints, or undefined for an unknown topic. */
export function topicGuide(topic: string, styles: Styles, readme = readFileSync(README, "utf8")): string | undefined {
  if (!Object.hasOwn(HELP_TOPICS, topic)) return undefined;
  const found = topicMarkdown(readme, topic);
  if (!found) return undefined;
  return `${styles.bold(`lllm help ${topic}`)}: ${HELP_TOPICS[topic]}\n\n${renderMarkdown(found.text, styles)}\n\n${styles.dim(`More in the README, section "${found.section}".`)}\n`;
}
