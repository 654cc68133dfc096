import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { documentationPages, fencedBlocks, readPage } from "../helpers/markdown.js";
import { ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * Every TypeScript example of the pages that imports lllm type-checks against lllm's published types (dist/*.d.ts,
 * found through node_modules/lllm as in a package `lllm init` makes), with `strict` on. The runnable ones run, but
 * without a type check; most only show an API (they need a key or a server). So a renamed option or export is caught
 * here rather than by a reader's editor.
 */

const IMPORTS_LLLM = /from\s+["']lllm(?:\/testing)?["']/;

/** The pages' TypeScript blocks that import lllm, each named after its page and line. */
function typescriptExamples(): Array<{ name: string; text: string }> {
  return documentationPages().flatMap((page) =>
    fencedBlocks(readPage(page))
      .filter((block) => block.info[0] === "ts" && IMPORTS_LLLM.test(block.text))
      .map((block) => ({ name: `${page.replace(/[/.]/g, "_")}_line_${block.line}.ts`, text: block.text })),
  );
}

/** tsc's report for these files, checked together in a folder of their own. */
function typeCheck(files: Array<{ name: string; text: string }>): { status: number | null; report: string } {
  const dir = tempDir("lllm-docs-ts-");
  mkdirSync(path.join(dir, "node_modules"));
  symlinkSync(ROOT, path.join(dir, "node_modules", "lllm"), "dir");
  writeFileSync(path.join(dir, "package.json"), '{ "type": "module" }\n');
  const compilerOptions = { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", noEmit: true, skipLibCheck: true, types: ["node"], typeRoots: [path.join(ROOT, "node_modules", "@types")] };
  writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*.ts"] }));
  // `export {}` makes each file a module: an example's top-level await and names stay its own.
  for (const file of files) writeFileSync(path.join(dir, file.name), `${file.text}\nexport {};\n`);
  const tsc = spawnSync(process.execPath, [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", dir], { cwd: dir, encoding: "utf8", timeout: 240_000 });
  return { status: tsc.status, report: (tsc.stdout + tsc.stderr).trim() };
}

describe("the documentation's TypeScript examples", () => {
  it("type-check against lllm's types, and a wrong one is caught", { timeout: 300_000 }, () => {
    const examples = typescriptExamples();
    expect(examples.map((example) => example.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^README_md_line_/), expect.stringMatching(/^docs_library_md_line_/), expect.stringMatching(/^docs_testing_md_line_/)]));
    // One example with a mistake, checked in the same run: tsc reports it, and only it.
    const wrong = { name: "wrong_example.ts", text: 'import { tool } from "lllm";\nexport default tool({ name: "x", description: "x", parameters: {}, rn: () => "x" });' };
    const { status, report } = typeCheck([...examples, wrong]);
    const lines = report.split("\n").filter((line) => /^\S+\.ts\(\d+,\d+\): error/.test(line));
    expect(lines.filter((line) => !line.startsWith("wrong_example.ts")), report).toEqual([]);
    expect(lines.length, report).toBeGreaterThan(0);
    expect(status).toBe(2);
  });
});
