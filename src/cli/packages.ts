import { lllmHome } from "../config/lllmHome.js";
import { SCHEMA_VERSION, writeErr, writeOut } from "./output.js";

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
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, removed: result.source, manifest: result.manifest }, null, 2));
    return;
  }
  writeErr(`lllm: removed ${result.source} from ${result.manifest}`);
}

export async function updateCommand(name: string | undefined, flags: ConsentFlags): Promise<void> {
  const { updatePackages } = await import("../packages/projectPackages.js");
  const changes = await updatePackages(name, await projectOptions(flags));
  if (flags.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, updated: changes }, null, 2));
    return;
  }
  for (const change of changes) writeErr(`lllm: ${change.source}: ${change.from === change.to ? `${change.to} (unchanged)` : `${change.from ?? "not locked"} -> ${change.to}`}`);
}
