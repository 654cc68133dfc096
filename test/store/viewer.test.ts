import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, ROOT } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { cli } from "./storeTestHelpers.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((file) => existsSync(file));
const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");

let viewer: ChildProcess | undefined;
afterEach(async () => {
  if (viewer && viewer.exitCode === null) {
    const closed = new Promise((resolve) => viewer!.on("close", resolve));
    viewer.kill("SIGTERM");
    await closed;
  }
  viewer = undefined;
  removeTempDirs();
});

/** Start `lllm logs serve --port 0` and wait for the line that gives its address. */
async function serve(home: string): Promise<string> {
  viewer = spawn(process.execPath, [BIN, "logs", "serve", "--port", "0"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, LLLM_HOME: home, NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  return new Promise((resolve, reject) => {
    viewer!.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /the run viewer is at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    viewer!.on("close", (code) => reject(new Error(`lllm logs serve ended (${code}): ${stderr}`)));
  });
}

function rawRequest(url: string, options: { method?: string; host?: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const call = request({ host: "127.0.0.1", port: target.port, path: "/api/runs", method: options.method ?? "GET", headers: options.host ? { host: options.host } : {} }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    call.on("error", reject);
    call.end();
  });
}

// Needs Debian's chromium (installed by .ci/run); on CI it must run, never skip.
describe.skipIf(!CHROMIUM && !process.env.CI)("lllm logs serve, in a real browser", { timeout: 180_000 }, () => {
  it("lists the runs, shows a run's timeline, and opens a tool call's arguments", async () => {
    const home = tempDir();
    const script = tempDir();
    writeFileSync(path.join(script, "short.yaml"), "- tool_calls: [{name: get_weather, arguments: {city: Oslo}}]\n");
    expect((await cli(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris and Tokyo?", "--no-stream"])).code).toBe(0);
    expect((await cli(home, ["run", weather, "--model", `scripted:${path.join(script, "short.yaml")}`, "--input", "Oslo?", "--no-stream"])).code).toBe(1);
    const url = await serve(home);

    // Read-only, and only for this loopback address.
    expect(await rawRequest(url, { method: "POST" })).toBe(405);
    expect(await rawRequest(url, { host: "attacker.example" })).toBe(403);

    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage();
      const outside: string[] = [];
      page.on("request", (sent) => {
        if (!sent.url().startsWith(url)) outside.push(sent.url());
      });
      await page.goto(url);
      const rows = page.locator("tr.run");
      await expect.poll(() => rows.count()).toBe(2);
      expect(await rows.nth(0).locator(".status").textContent()).toBe("error");
      expect(await rows.nth(1).locator(".status").textContent()).toBe("ok");

      await rows.nth(1).click();
      await page.locator("#run-output").waitFor();
      expect(await page.locator("#run-input").textContent()).toBe("Paris and Tokyo?");
      expect(await page.locator("#run-output").textContent()).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.");
      const steps = page.locator("#timeline .step");
      expect(await steps.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-kind")))).toEqual(["model", "tool", "tool", "model"]);

      await page.locator('#timeline .step[data-kind="tool"]').first().click();
      await page.locator("#tool-arguments").waitFor();
      expect(JSON.parse((await page.locator("#tool-arguments").textContent())!)).toEqual({ city: "Paris" });
      expect(await page.locator("#tool-result").textContent()).toContain("Sunny, 22 degrees celsius in Paris");

      // The filters ask the server again.
      await page.locator("#status").selectOption("error");
      await expect.poll(() => rows.count()).toBe(1);
      expect(outside).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
