import path from "node:path";
import { lllmHome } from "../config/lllmHome.js";
import { addFailureDetails, SCHEMA_VERSION, writeErr, writeOut } from "./output.js";
import { writeOutputFile } from "./writeOutputFile.js";
import type { ListedPackage } from "../packages/listPackages.js";

/**
 * `lllm add | install | remove | update`: the project's shared packages (src/packages/). Thin: options in, one
 * call, what happened on stderr (stdout stays for `--json` data).
 */

interface ConsentFlags {
  trust?: boolean;
  json?: boolean;
}

async function projectOptions(flags: ConsentFlags) {
  const { terminalQuestion } = await import("../packages/consent.js");
  const ask = terminalQuestion();
  return {
    cwd: process.cwd(),
    home: lllmHome(),
    consent: { trust: flags.trust === true, ...(ask !== undefined ? { ask } : {}), write: writeErr },
    report: writeErr,
  };
}

export async function addCommand(source: string, flags: ConsentFlags & { as?: string }): Promise<void> {
  const { addPackage } = await import("../packages/projectPackages.js");
  const result = await addPackage(source, flags.as, await projectOptions(flags));
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, source: result.source, ...(result.alias ? { alias: result.alias } : {}), package: result.entry, manifest: result.manifest, lock: result.lock }, null, 2));
    return;
  }
  writeErr(`lllm: added ${result.source}${result.alias ? ` as ${result.alias}` : ""} to ${result.manifest} and ${result.lock}`);
}

export async function installCommand(flags: ConsentFlags & { frozen?: boolean }): Promise<void> {
  const { installPackages } = await import("../packages/projectPackages.js");
  const result = await installPackages(flags.frozen === true, await projectOptions(flags));
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, installed: result.installed, fetched: result.fetched, lock: result.lock }, null, 2));
    return;
  }
  writeErr(`lllm: ${result.installed} package${result.installed === 1 ? "" : "s"} installed${result.fetched > 0 ? ` (${result.fetched} fetched)` : ", all from the cache"}`);
}

export async function removeCommand(name: string, flags: { json?: boolean }): Promise<void> {
  const { removePackage } = await import("../packages/projectPackages.js");
  const result = await removePackage(name, { cwd: process.cwd() });
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, removed: result.source, manifest: result.manifest, lock: result.lock }, null, 2));
    return;
  }
  writeErr(`lllm: removed ${result.source} from ${result.manifest} and ${path.basename(result.lock)}`);
}

export async function updateCommand(name: string | undefined, flags: ConsentFlags): Promise<void> {
  const { updatePackages } = await import("../packages/projectPackages.js");
  const changes = await updatePackages(name, await projectOptions(flags));
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, updated: changes }, null, 2));
    return;
  }
  for (const change of changes) writeErr(`lllm: ${change.source}: ${change.changed ? `${change.from ?? "not locked"} -> ${change.to}` : `${change.to} (unchanged)`}`);
}

export async function packCommand(dir: string | undefined, flags: { out?: string; json?: boolean }): Promise<void> {
  const { packPackage } = await import("../packages/packPackage.js");
  const path = await import("node:path");
  const packed = await packPackage(dir ?? ".");
  const file = path.resolve(flags.out ?? packed.fileName);
  writeOutputFile("-o", file, packed.archive, packed.fileName);
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, file, files: packed.files, bytes: packed.archive.length }, null, 2));
    return;
  }
  writeErr(`lllm: ${packed.files.length} file${packed.files.length === 1 ? "" : "s"} packed (${packed.archive.length} bytes):\n${packed.files.map((name) => `  ${name}`).join("\n")}`);
  writeOut(file);
}

export async function publishCommand(dir: string | undefined, flags: { to: string; json?: boolean }): Promise<void> {
  const { publishPackage } = await import("../packages/publishPackage.js");
  const published = await publishPackage(dir ?? ".", flags.to, { write: writeErr });
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, source: published.source, files: published.files }, null, 2));
    return;
  }
  writeOut(published.source);
}

export async function listCommand(flags: { json?: boolean }): Promise<void> {
  const { listPackages, modifiedPackagesError } = await import("../packages/listPackages.js");
  const rows = await listPackages({ cwd: process.cwd(), home: lllmHome() });
  // A package modified in the cache is refused by runs: the full list still shows, and the command fails as a run
  // would (exit 2, the same error and hint), so that a script checking the project sees it.
  const refused = modifiedPackagesError(rows);
  if (flags.json) {
    const packages = rows.map(listedJson);
    if (refused !== undefined) {
      addFailureDetails(refused, { packages }); // one JSON object: the list and the error together
      throw refused;
    }
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, packages }, null, 2));
    return;
  }
  if (rows.length === 0) {
    writeErr("lllm: the project has no packages to fetch (`lllm add SOURCE` adds one)");
    return;
  }
  writeOut(table(["NAME", "SOURCE", "VERSION", "CODE", "TRUSTED BY", "STATE"], rows.map((row) => [row.dependencyOf ? `  ${row.name} (of ${row.dependencyOf})` : row.name, row.source, row.version ?? "-", row.code.length === 0 ? "none" : `${row.code.length} file${row.code.length === 1 ? "" : "s"}`, row.trustedBy ?? "-", row.state])));
  if (refused !== undefined) throw refused;
}

export async function outdatedCommand(flags: { json?: boolean }): Promise<void> {
  const { outdatedPackages } = await import("../packages/outdatedPackages.js");
  const rows = await outdatedPackages({ cwd: process.cwd() });
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, outdated: rows }, null, 2));
    return;
  }
  if (rows.length === 0) {
    writeErr("lllm: every package is as new as its source gives");
    return;
  }
  writeOut(table(["NAME", "SOURCE", "CURRENT", "WANTED", "LATEST"], rows.map((row) => [row.name, row.source, row.current, row.wanted, row.latest ?? "-"])));
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows].map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ")).join("\n");
}

/** A listed package as `lllm list --json` prints it: snake_case, as every `--json` (it printed `trustedBy`, `dependencyOf`). */
function listedJson(row: ListedPackage): Record<string, unknown> {
  return {
    name: row.name,
    source: row.source,
    ...(row.version !== undefined ? { version: row.version } : {}),
    code: row.code,
    ...(row.trustedBy !== undefined ? { trusted_by: row.trustedBy } : {}),
    state: row.state,
    ...(row.dependencyOf !== undefined ? { dependency_of: row.dependencyOf } : {}),
    ...(row.modified !== undefined ? { modified: row.modified } : {}),
  };
}
