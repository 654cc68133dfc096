import { loadProjectSettings } from "../config/index.js";
import type { DoctorCheck } from "../doctor/DoctorCheck.js";
import { runDoctor } from "../doctor/runDoctor.js";
import { prepareTactic } from "../tactics/prepareTactic.js";
import { paint, SCHEMA_VERSION, writeOut } from "./output.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";
import { settingsWithoutCode } from "./settingsWithoutCode.js";

export interface DoctorCommandOptions {
  package?: string[];
  model?: string;
  queue?: string;
  json?: boolean;
}

const MARKS = { ok: ["ok  ", "green"], warn: ["warn", "yellow"], fail: ["FAIL", "red"] } as const;

/**
 * `lllm doctor [TACTIC]`: what lllm needs here, and how to fix each missing piece. Exit 1 when something fails:
 * something the tactic (or `--queue`) needs is missing, or nothing can work (the keys file, Node). The report is
 * data (stdout); `--json` prints it as one object.
 */
export async function doctorCommand(tactic: string | undefined, options: DoctorCommandOptions): Promise<void> {
  // Without a tactic nothing of the folder runs (a clone's lllm.config.mjs included); a tactic loads as a run would.
  const settings = tactic === undefined ? await settingsWithoutCode("doctor") : (await loadProjectSettings(process.cwd())).settings;
  // A tactic that does not load is reported as usual (exit 2): there is nothing to check it against.
  const prepared = tactic === undefined ? undefined : await prepareTactic(await resolveTacticTarget(tactic, options.package), { ...(options.model ? { model: options.model } : {}), ...(options.package ? { packages: options.package } : {}) });
  const checks = await runDoctor({
    ...(prepared ? { prepared } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.queue !== undefined ? { queue: options.queue } : {}),
    ...(settings.home ? { storeHome: settings.home } : {}),
  });
  const ok = checks.every((check) => check.status !== "fail");
  if (!ok) process.exitCode = 1;
  if (options.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, ok, tactic: prepared ? prepared.tactic.file : null, checks }, null, 2));
    return;
  }
  writeOut(report(checks, ok, prepared?.tactic.file));
}

function report(checks: DoctorCheck[], ok: boolean, tactic: string | undefined): string {
  const width = Math.max(...checks.map((check) => check.name.length));
  const lines = checks.map((check) => {
    const [mark, colour] = MARKS[check.status];
    const fix = check.fix && check.status !== "ok" ? `\n${" ".repeat(width + 7)}${paint("dim", `fix: ${check.fix}`, process.stdout)}` : "";
    return `${paint(colour, mark, process.stdout)}  ${check.name.padEnd(width)}  ${check.detail}${fix}`;
  });
  const failed = checks.filter((check) => check.status === "fail").length;
  lines.push("", ok ? `Everything ${tactic ? "this tactic needs" : "lllm needs"} is here.` : `${failed} problem${failed === 1 ? "" : "s"} ${tactic ? `stop${failed === 1 ? "s" : ""} this tactic` : "to fix"} (exit 1).`);
  return lines.join("\n");
}
