import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./runCli.js";

/** A fenced code block of a Markdown page. */
export interface FencedBlock {
  /** The words after the opening fence: `["sh", "run"]`. */
  info: string[];
  /** The block's text, without the fences. */
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The `output` block right after it (only blank lines between), if any. */
  output?: FencedBlock;
}

/** A page's fenced blocks, in order; an `output` block is attached to the block before it, not listed. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split("\n");
  let previousEnd = -2;
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(.*)$/.exec(lines[index]!);
    if (!open) continue;
    const [, indent, fence] = open as unknown as [string, string, string];
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !isClosingFence(lines[end]!, fence)) body.push(lines[end++]!.slice(indent.length));
    const block: FencedBlock = { info: open[3]!.trim().split(/\s+/).filter(Boolean), text: body.join("\n"), line: index + 1 };
    const between = lines.slice(previousEnd + 1, index);
    const last = blocks.at(-1);
    if (block.info[0] === "output" && last && !last.output && between.every((line) => line.trim() === "")) last.output = block;
    else blocks.push(block);
    previousEnd = end;
    index = end;
  }
  return blocks;
}

/** A line that closes a block opened with `fence`: as many fence characters or more, and nothing else. */
function isClosingFence(line: string, fence: string): boolean {
  const trimmed = line.trim();
  return trimmed.startsWith(fence[0]!.repeat(fence.length)) && trimmed.replace(/^[`~]+/, "") === "";
}

/** A page's text with its fenced blocks and inline code blanked out (same lines), where links and headings are read. */
export function proseOf(markdown: string): string {
  return withoutFences(markdown)
    .map((line) => line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (code) => " ".repeat(code.length)))
    .join("\n");
}

/** A page's lines with those of its fenced blocks blank: line numbers stay, and nothing read starts in a block. */
function withoutFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker) {
      fence = marker;
      return "";
    }
    if (fence !== undefined) {
      if (isClosingFence(line, fence)) fence = undefined;
      return "";
    }
    return line;
  });
}

/** A link of a page: its target as written, and its line. */
export interface PageLink {
  target: string;
  line: number;
}

/** The links of a page's prose: `[text](target)` and `<a href="target">`, not those in code. */
export function pageLinks(markdown: string): PageLink[] {
  const links: PageLink[] = [];
  proseOf(markdown)
    .split("\n")
    .forEach((line, index) => {
      for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|<a\s+href="([^"]+)"/g)) links.push({ target: (match[1] ?? match[2])!, line: index + 1 });
    });
  return links;
}

/** The headings of a page's prose (`## Text`), as written. */
export function pageHeadings(markdown: string): string[] {
  const original = markdown.split("\n");
  // Headings are read from the prose (so none inside a code block counts), with their code spans as written.
  return proseOf(markdown)
    .split("\n")
    .flatMap((line, index) => (/^#{1,6} /.test(line) ? [original[index]!.replace(/^#{1,6} /, "").trim()] : []));
}

/** The explicit anchors of a page: `<a id="x">` and `<a name="x">`. */
export function explicitAnchors(markdown: string): string[] {
  return [...proseOf(markdown).matchAll(/<a\s+(?:id|name)="([^"]+)"/g)].map((match) => match[1]!);
}

/** Every documentation page of the clone: README.md and the Markdown files under docs/, as paths from the root. */
export function documentationPages(root = ROOT): string[] {
  const found = ["README.md"];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const relative = path.posix.join(folder, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith(".md")) found.push(relative);
    }
  };
  walk("docs");
  return found;
}

/** A page's text, by its path from the root. */
export function readPage(page: string, root = ROOT): string {
  return readFileSync(path.join(root, page), "utf8");
}

/** A code span of a page's prose (`` `lllm run …` ``), with the line it starts on; it may run over a line break. */
export interface CodeSpan {
  text: string;
  line: number;
}

/** The code spans of a page's prose, not those inside fenced blocks. */
export function codeSpans(markdown: string): CodeSpan[] {
  const text = withoutFences(markdown).join("\n");
  return [...text.matchAll(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g)].map((match) => ({ text: match[2]!.replace(/\n/g, " "), line: text.slice(0, match.index).split("\n").length }));
}
