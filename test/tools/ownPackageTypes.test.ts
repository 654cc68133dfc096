import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/runCli.js";

/**
 * The "package in any folder" tool of docs/getting-started.md, in a folder outside the clone, type-checks against
 * the built lllm through a tsconfig `paths` entry (as that page says): `run`'s arguments are typed from the zod schema, so a mistake in
 * the tool is caught by tsc. Needs `dist/` (npm run build).
 */
const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-own-package-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PAGE = path.join(ROOT, "docs", "getting-started.md");

function readmeShout(): string {
  const readme = readFileSync(PAGE, "utf8");
  const match = /cat > tools\/shout\.ts <<'TS'\n([\s\S]*?)\nTS\n/.exec(readme);
  if (!match) throw new Error("docs/getting-started.md no longer has the `cat > tools/shout.ts <<'TS'` example");
  return match[1]!;
}

function readmeTsconfig(): string {
  const readme = readFileSync(PAGE, "utf8");
  const match = /a `tsconfig.json` path:\n\n```json\n([\s\S]*?)\n```/.exec(readme);
  if (!match) throw new Error("docs/getting-started.md no longer has the tsconfig `paths` example");
  return match[1]!;
}

/** tsc once over the tools folder holding `files` (name -> source), as the page's tsconfig has it. */
async function typecheck(files: Record<string, string>): Promise<{ code: number; output: string }> {
  mkdirSync(path.join(dir, "tools"), { recursive: true });
  for (const [name, source] of Object.entries(files)) writeFileSync(path.join(dir, "tools", name), source);
  // The page's tsconfig, with the clone's path filled in.
  writeFileSync(path.join(dir, "tsconfig.json"), readmeTsconfig().replace("/path/to/lllm/", `${ROOT}/`));
  const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [tsc, "-p", path.join(dir, "tsconfig.json")], { cwd: dir });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { code: failed.code ?? 1, output: failed.stdout ?? String(error) };
  }
}

// tsc over lllm's built types took 59-71 s a run on a loaded machine: one run checks both files.
describe("a package outside the clone type-checks its tools", () => {
  it("the getting-started page's shout tool passes strict tsc, and a wrong use of an argument is caught", async () => {
    const result = await typecheck({ "shout.ts": readmeShout(), "wrong.ts": readmeShout().replace("text.toUpperCase()", "text.toFixed(2)") });
    const errors = result.output.split("\n").filter((line) => /error TS\d+/.test(line));
    expect(errors.filter((line) => line.startsWith("tools/shout.ts")), result.output).toEqual([]);
    expect(errors.filter((line) => line.startsWith("tools/wrong.ts")), result.output).toEqual([expect.stringContaining("Property 'toFixed' does not exist on type 'string'")]);
    expect(result.code).not.toBe(0);
  }, 300_000);
});
