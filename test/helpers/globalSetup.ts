import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { processAlive } from "../../src/util/processAlive.js";

/**
 * Every test, and every CLI it spawns, writes its temporary files under one folder of its own (TMPDIR is inherited
 * by the workers and by their child processes), removed when the suite ends, so `npm test` leaves nothing in the
 * machine's temp dir whatever a test forgets. lllm's own leftovers are still caught: a kernel folder the product
 * failed to remove fails the run, since lllm promises to clean those up itself.
 *
 * Vitest calls setup and teardown once for the root config and once for each of its projects (vitest.config.ts), in
 * one process, each time in a module of its own: the state lives on the process, the first setup makes the suite's
 * folder and the last teardown removes it.
 */
interface Suite {
  setups: number;
  root?: string;
  /** The machine's temp dir (setup then points TMPDIR at the suite's folder), and what of lllm's it held then. */
  machineTemp: string;
  before: Set<string>;
  /** The developer's own lllm home's files with their modification times when the suite began. */
  homeBefore: Map<string, number>;
}
const suite: Suite = ((globalThis as { lllmTestSuite?: Suite }).lllmTestSuite ??= { setups: 0, machineTemp: tmpdir(), before: new Set(), homeBefore: new Map() });
const machineTemp = suite.machineTemp;
/** The developer's own lllm home. */
const realHome = path.join(homedir(), ".lllm");

export function setup(): void {
  suite.setups += 1;
  if (suite.setups > 1) return;
  removeRootsOfEndedRuns();
  suite.before = tempEntries();
  suite.homeBefore = filesOf(realHome);
  // The folder names the run's process, so that a later run can tell that a run killed before its teardown is over.
  const root = mkdtempSync(path.join(tmpdir(), `lllm-test-${process.pid}-`));
  // Readable and searchable by others (each test's own folders inside stay 0700): tests that run the CLI as another
  // user open the folders above theirs for it and put them back after. Two such tests opening and putting back this
  // shared folder at once raced: one's restore shut the other's user out mid-test.
  chmodSync(root, 0o755);
  suite.root = root;
  process.env.TMPDIR = root;
  // A backstop: library code run in the workers, and any child that inherits their environment, uses an LLLM_HOME
  // in that folder, never the developer's ~/.lllm. CLI spawns still get an empty home of their own (emptyHome).
  mkdirSync(path.join(root, "lllm-home"));
  process.env.LLLM_HOME = path.join(root, "lllm-home");
  // One code cache (compiled code, transpiled tools, validators, parsed YAML) for every CLI the tests start
  // (`cleanEnv`) and for library code in the workers: a CLI in an empty home of its own otherwise compiles all of
  // lllm and writes these caches at its end, nearly three times the CPU of a start that finds them.
  mkdirSync(path.join(root, "lllm-code-cache"), { mode: 0o700 });
  process.env.LLLM_CODE_CACHE = path.join(root, "lllm-code-cache");
}

export function teardown(): void {
  suite.setups -= 1;
  const root = suite.root;
  if (root === undefined || suite.setups > 0) return;
  const leftovers = readdirSync(root).filter((name) => name.startsWith("lllm-kernel-"));
  rmSync(root, { recursive: true, force: true });
  const problems: string[] = [];
  if (leftovers.length > 0) problems.push(`lllm left ${leftovers.length} kernel folder(s) in the temp dir: ${leftovers.slice(0, 5).join(", ")}`);
  // What escaped the suite's folder into the machine's temp dir: a child started without TMPDIR, or a tool that
  // keeps its files elsewhere (tmux's sockets follow TMUX_TMPDIR, jiti ignores a TMPDIR that is its working folder).
  const escaped = [...tempEntries()].filter((entry) => !suite.before.has(entry));
  if (escaped.length > 0) problems.push(`the tests left ${escaped.length} file(s) in ${machineTemp}: ${escaped.slice(0, 5).join(", ")}`);
  // A CLI started without LLLM_HOME (an environment built by hand, an MCP server started with the SDK's short list of
  // variables) keeps its caches and runs in the developer's ~/.lllm: a test's package transpiled there, its runs in
  // their log. (A run of the developer's own while the suite ran writes there too: then run the suite again.)
  const written = [...filesOf(realHome)].filter(([file, modified]) => suite.homeBefore.get(file) !== modified).map(([file]) => file);
  if (written.length > 0) problems.push(`the tests wrote ${written.length} file(s) in ${realHome}, the home of the user running them: ${written.slice(0, 5).join(", ")} (a run of yours meanwhile writes there too: then run the suite again)`);
  if (problems.length > 0) {
    // vitest prints an error thrown here and still exits 0: the exit code is set too, so `npm test` fails.
    process.exitCode = 1;
    throw new Error(problems.join("\n"));
  }
}

/** Every file under `folder` (none when it is not there), with its modification time. */
function filesOf(folder: string): Map<string, number> {
  const files = new Map<string, number>();
  let names: string[];
  try {
    names = readdirSync(folder, { recursive: true }) as string[];
  } catch {
    return files;
  }
  for (const name of names) {
    try {
      const stat = statSync(path.join(folder, name));
      if (stat.isFile()) files.set(name, stat.mtimeMs);
    } catch {
      // Gone meanwhile.
    }
  }
  return files;
}

/**
 * The machine's temp dir as far as the tests may touch it: names of lllm's (another suite's folder aside), and what
 * is inside the folders jiti and tmux use there. Anything else may be another program's, written meanwhile.
 */
function tempEntries(): Set<string> {
  const entries = new Set<string>();
  const list = (folder: string): string[] => {
    try {
      return readdirSync(folder);
    } catch {
      return [];
    }
  };
  for (const name of list(machineTemp)) if (name.startsWith("lllm-") && !name.startsWith("lllm-test-")) entries.add(name);
  for (const folder of ["jiti", `tmux-${process.getuid?.() ?? ""}`]) for (const name of list(path.join(machineTemp, folder))) entries.add(`${folder}/${name}`);
  return entries;
}

/**
 * The folders of earlier runs whose process is gone: a run killed (Ctrl-C twice, a CI time limit) never reaches its
 * teardown. A folder of a run still going (another `npm test` beside this one) is left alone.
 */
function removeRootsOfEndedRuns(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(/^lllm-test-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    try {
      rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
    } catch {
      // what cannot be removed (a folder a test made read-only, as another user) is not worth failing this run for
    }
  }
}
