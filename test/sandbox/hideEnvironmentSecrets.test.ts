import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/paths.js";

// A process of lllm's user reads lllm's initial environment in /proc/<pid>/environ (issue 19 item 10). After
// hideEnvironmentSecrets, no credential is left there, while lllm itself (process.env, the children it starts with
// its environment) still has every value. Run in a child of its own, as the CLI is: this worker's environment is
// left alone.
const MODULE = path.join(ROOT, "dist", "sandbox", "hideEnvironmentSecrets.js");
const PROBE = `
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
const { hideEnvironmentSecrets } = await import(${JSON.stringify(MODULE)});
const before = readFileSync("/proc/self/environ", "utf8");
const failure = hideEnvironmentSecrets();
const after = readFileSync("/proc/self/environ", "utf8");
const child = execFileSync(process.execPath, ["-e", "process.stdout.write(process.env.SERVICE_TOKEN + ' ' + process.env.PLAIN)"], { encoding: "utf8" });
process.stdout.write(JSON.stringify({ before, after, failure: failure ?? null, token: process.env.SERVICE_TOKEN, plain: process.env.PLAIN, child }));
`;

describe.runIf(process.platform === "linux")("hideEnvironmentSecrets", () => {
  it("leaves no credential in /proc/self/environ, and lllm and its children keep every value", () => {
    const ran = spawnSync(process.execPath, ["--input-type=module", "-e", PROBE], {
      env: { PATH: process.env.PATH, SERVICE_TOKEN: "tok-0123456789abcdef", PLAIN: "ordinary value" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(ran.stderr).toBe("");
    const result = JSON.parse(ran.stdout) as { before: string; after: string; failure: string | null; token: string; plain: string; child: string };
    expect(result.before).toContain("SERVICE_TOKEN=tok-0123456789abcdef\0");
    expect(result.failure).toBeNull();
    expect(result.after).not.toContain("tok-0123456789abcdef");
    expect(result.after).toContain(`SERVICE_TOKEN=${"*".repeat("tok-0123456789abcdef".length)}\0`);
    expect(result.after).toContain("PLAIN=ordinary value\0");
    expect(result.token).toBe("tok-0123456789abcdef");
    expect(result.plain).toBe("ordinary value");
    expect(result.child).toBe("tok-0123456789abcdef ordinary value");
  });
});
