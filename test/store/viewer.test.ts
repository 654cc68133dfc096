import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { request, type IncomingHttpHeaders } from "node:http";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { weatherProject } from "../helpers/weatherProject.js";
import { encodingsOf, leaksOf } from "../helpers/secretEncodings.js";
import { cli, listRuns, seedRuns, type SeedRun } from "./storeTestHelpers.js";
import { durableProject, waitForFile } from "../helpers/durableProject.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((file) => existsSync(file));
const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");
const salary = path.join(ROOT, "packages-example/company/tactics/salary.yaml");
const salaryScript = path.join(ROOT, "packages-example/company/scripted/salary.yaml");
const pipeline = path.join(ROOT, "test/fixtures/run/pipeline.yaml");
/** Where the screenshots go: a temp folder removed after the file, or LLLM_VIEWER_SCREENSHOTS to look at them. */
const SCREENSHOTS = process.env.LLLM_VIEWER_SCREENSHOTS;
const WIDTHS = [1280, 1920];

interface Served {
  /** The printed address, with its token. */
  url: string;
  origin: string;
  port: number;
  token: string;
  stderr: () => string;
}

/** The viewers started and not yet stopped. */
const viewers = new Set<ChildProcess>();

async function stopViewers(): Promise<void> {
  await Promise.all(
    [...viewers].map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        const closed = new Promise((resolve) => child.on("close", resolve));
        child.kill("SIGTERM");
        await closed;
      }
      viewers.delete(child);
    }),
  );
}

/** Start `lllm logs serve --port 0` and wait for the line that gives its address. */
async function serve(home: string, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, "logs", "serve", "--port", "0"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  viewers.add(child);
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /the run viewer is at (http:\/\/127\.0\.0\.1:(\d+))\/\?token=([A-Za-z0-9_-]+) /.exec(stderr);
      if (match) resolve({ url: `${match[1]}/?token=${match[3]}`, origin: match[1]!, port: Number(match[2]), token: match[3]!, stderr: () => stderr });
    });
    child.on("close", (code) => reject(new Error(`lllm logs serve ended (${code}): ${stderr}`)));
  });
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(served: Served, target: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const call = request({ host: "127.0.0.1", port: served.port, path: target, method: options.method ?? "GET", headers: { host: `127.0.0.1:${served.port}`, ...options.headers } }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    call.on("error", reject);
    call.end();
  });
}

describe("lllm logs serve: who may read it", { timeout: 120_000 }, () => {
  afterEach(stopViewers);

  it("answers only with the printed token or its cookie, only at its own address, and sends no CORS header", async () => {
    const home = tempDir();
    const [id] = seedRuns(path.join(home, "logs.db"), [{ startedAt: Date.now() - 1000, tactic: "weather", input: "Paris?" }]);
    const served = await serve(home);
    expect(served.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const answers: Answer[] = [];
    const ask = async (target: string, options: Parameters<typeof send>[2] = {}): Promise<Answer> => {
      const answer = await send(served, target, options);
      answers.push(answer);
      return answer;
    };

    for (const target of ["/", `/runs/${id}`, "/api/runs", `/api/runs/${id}`, "/api/facets"]) {
      const refused = await ask(target);
      expect(refused.status, target).toBe(401);
      expect(JSON.parse(refused.body).error).toContain("open the address `lllm logs serve` printed");
    }
    // A wrong token of any length is refused the same way (compared as equal-length digests: no 500 on a length).
    const wrong = served.token.slice(0, -1) + (served.token.endsWith("A") ? "B" : "A");
    for (const guess of [wrong, "short", served.token + "x", ""]) expect((await ask(`/?token=${encodeURIComponent(guess)}`)).status, guess).toBe(401);

    const opened = await ask(`/?token=${served.token}`);
    expect(opened.status).toBe(200);
    const cookie = `lllm_viewer_${served.port}=${served.token}`;
    expect(opened.headers["set-cookie"]).toEqual([`${cookie}; HttpOnly; SameSite=Strict; Path=/`]);
    expect(opened.headers["referrer-policy"]).toBe("no-referrer");
    expect(opened.headers["content-security-policy"]).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-[A-Za-z0-9+/=]+'; connect-src 'self';/);

    const withCookie = { cookie: `other=1; ${cookie}` };
    const list = await ask("/api/runs", { headers: withCookie });
    expect(list.status).toBe(200);
    expect(JSON.parse(list.body)).toMatchObject({ total: 1, offset: 0, runs: [{ id, tactic_name: "weather", input: "Paris?" }] });
    expect((await ask(`/runs/${id}`, { headers: withCookie })).status).toBe(200);
    expect(JSON.parse((await ask(`/api/runs/${id}`, { headers: withCookie })).body)).toMatchObject({ id, status: "ok", model_calls: [] });
    expect((await ask("/api/runs", { headers: { cookie: `lllm_viewer_${served.port}=${wrong}` } })).status).toBe(401);
    expect((await ask("/api/runs", { headers: { cookie: `lllm_viewer_${served.port + 1}=${served.token}` } })).status).toBe(401);
    expect((await ask("/api/runs?status=fine", { headers: withCookie })).status).toBe(400);
    // A malformed escape in a run's address is no run, not a failure of the viewer.
    const malformed = await ask("/api/runs/%E0", { headers: withCookie });
    expect(malformed.status).toBe(404);
    expect(JSON.parse(malformed.body).error).toBe("no run %E0 in the log");

    // DNS rebinding: a page of another name that resolves to 127.0.0.1 sends its own Host; the token does not help it.
    expect((await ask(`/?token=${served.token}`, { headers: { host: `attacker.example:${served.port}` } })).status).toBe(403);
    expect((await ask("/api/runs", { headers: { ...withCookie, host: `attacker.example:${served.port}` } })).status).toBe(403);
    expect((await ask("/api/runs", { headers: { ...withCookie, host: `127.0.0.1:${served.port + 1}` } })).status).toBe(403);
    expect((await ask("/api/runs", { headers: { ...withCookie, host: `localhost:${served.port}` } })).status).toBe(200);

    // Read-only, and no preflight is ever granted.
    expect((await ask("/api/runs", { method: "POST", headers: withCookie })).status).toBe(405);
    const preflight = await ask("/api/runs", { method: "OPTIONS", headers: { ...withCookie, origin: "http://attacker.example", "access-control-request-method": "GET" } });
    expect(preflight.status).toBe(405);
    expect((await ask("/api/runs", { headers: { ...withCookie, origin: "http://attacker.example" } })).status).toBe(200);

    expect(answers.flatMap((answer) => Object.keys(answer.headers).filter((name) => name.startsWith("access-control-")))).toEqual([]);
    // The token is in the printed line and in the cookie it sets, nowhere else: no page, no error, no log line.
    expect(answers.filter((answer) => answer.body.includes(served.token))).toEqual([]);
    expect(served.stderr().split(served.token)).toHaveLength(2);
  });

  it("with --json prints its address as one object on stdout once it listens, the address that answers", async () => {
    const home = tempDir();
    const child = spawn(process.execPath, [BIN, "logs", "serve", "--port", "0", "--json"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    viewers.add(child);
    let stdout = "";
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("\n")) resolve(stdout);
      });
      child.on("close", (code) => reject(new Error(`lllm logs serve ended (${code})`)));
    });
    const { url, schema_version: version } = JSON.parse(line) as { url: string; schema_version: number };
    expect(version).toBe(1);
    const address = new URL(url);
    const page = await send({ url, origin: address.origin, port: Number(address.port), token: address.searchParams.get("token")!, stderr: () => "" }, `${address.pathname}${address.search}`);
    expect(page.status).toBe(200);
  });

  it("redacts a key of its environment from every answer, as lllm logs show does, in every encoding", async () => {
    // The run printed the key before lllm knew it was one (it was set in the environment only later): the record
    // holds it as it is, and the viewer, unlike `lllm logs show`, served it so.
    const key = "sk-view3r/Key+0123456789";
    const home = tempDir();
    const forms = Object.values(encodingsOf(key)).join(" | ");
    const [id] = seedRuns(path.join(home, "logs.db"), [{ startedAt: Date.now() - 1000, tactic: "weather", input: `in ${key} | ${forms}`, output: `out ${key} | ${forms}` }]);
    const served = await serve(home, { OPENAI_API_KEY: key });
    const cookie = { cookie: `lllm_viewer_${served.port}=${served.token}` };
    const list = await send(served, "/api/runs?q=in", { headers: cookie });
    const run = await send(served, `/api/runs/${id}`, { headers: cookie });
    expect([list.status, run.status]).toEqual([200, 200]);
    expect(JSON.parse(list.body).runs[0].input).toMatch(/^in \[redacted\] \| /);
    expect(JSON.parse(run.body)).toMatchObject({ id, output: expect.stringMatching(/^out \[redacted\] \| /) });
    expect(leaksOf(list.body, key)).toEqual([]);
    expect(leaksOf(run.body, key)).toEqual([]);
  });
});

/**
 * What a user would see as broken at this width: hidden or cut columns, a detail pane wider than itself. (Browser
 * code, as a string: the tests are typed without the DOM's types.)
 */
const LAYOUT_PROBLEMS = `(() => {
  const problems = [];
  const runs = document.getElementById("runs").getBoundingClientRect();
  for (const cell of document.querySelectorAll("#runs th, #runs tr.run td.number, #runs tr.run td.status")) {
    const box = cell.getBoundingClientRect();
    if (box.width < 20 || box.left < runs.left - 0.5 || box.right > runs.right + 0.5) problems.push("list column " + JSON.stringify(cell.textContent) + " is not in view (" + Math.round(box.left) + "-" + Math.round(box.right) + " of " + Math.round(runs.left) + "-" + Math.round(runs.right) + ")");
    else if (cell.scrollWidth > cell.clientWidth) problems.push("list cell " + JSON.stringify(cell.textContent) + " is cut");
  }
  if (document.documentElement.scrollWidth > window.innerWidth) problems.push("the page is " + document.documentElement.scrollWidth + " px wide in a " + window.innerWidth + " px window");
  const detail = document.getElementById("detail");
  if (detail.scrollLeft !== 0) problems.push("the detail pane is scrolled " + detail.scrollLeft + " px sideways");
  if (detail.scrollWidth > detail.clientWidth) problems.push("the detail pane's content is " + detail.scrollWidth + " px wide in " + detail.clientWidth + " px");
  const bounds = detail.getBoundingClientRect();
  for (const node of detail.querySelectorAll("*")) {
    const box = node.getBoundingClientRect();
    if (box.width > 0 && (box.left < bounds.left - 0.5 || box.right > bounds.right + 0.5)) problems.push(node.tagName.toLowerCase() + "." + node.className + " " + JSON.stringify((node.textContent || "").slice(0, 40)) + " sticks out of the detail pane");
  }
  return [...new Set(problems)].slice(0, 10);
})()`;

async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(LAYOUT_PROBLEMS);
}

// Needs Debian's chromium (installed by .ci/run); on CI it must run, never skip.
describe.skipIf(!CHROMIUM && !process.env.CI)("lllm logs serve, in a real browser", { timeout: 300_000 }, () => {
  let browser: Browser;
  /** A viewer over four runs made by the CLI: a tool loop, a failure, a two-agent pipeline, a code-action program. */
  let served: Served;
  const ids: Record<"weather" | "failed" | "pipeline" | "salary", string> = { weather: "", failed: "", pipeline: "", salary: "" };
  const shots = SCREENSHOTS ?? tempDir();

  beforeAll(async () => {
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ["--no-sandbox"] });
    const home = tempDir();
    const script = tempDir();
    writeFileSync(path.join(script, "short.yaml"), "- tool_calls: [{name: get_weather, arguments: {city: Oslo}}]\n");
    writeFileSync(path.join(script, "pipeline.yaml"), "- A rough draft.\n- A polished draft.\n");
    const runs: Array<[keyof typeof ids, string[], number]> = [
      ["weather", ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris and Tokyo?", "--no-stream"], 0],
      ["failed", ["run", weather, "--model", `scripted:${path.join(script, "short.yaml")}`, "--input", "Oslo?", "--no-stream"], 1],
      ["pipeline", ["run", pipeline, "--model", `scripted:${path.join(script, "pipeline.yaml")}`, "--input", "rain"], 0],
      ["salary", ["run", salary, "--model", `scripted:${salaryScript}`, "--input", "What is the combined salary of everyone in Engineering?"], 0],
    ];
    for (const [name, args, code] of runs) {
      const result = await cli(home, args);
      expect(result.code, result.stderr).toBe(code);
      ids[name] = (await listRuns(home, ["-n", "1"]))[0]!.id;
    }
    served = await serve(home);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await stopViewers();
  });

  /** A page at this width, opened at the printed address (so with the cookie), failing on any script error or outside request. */
  async function openPage(width: number): Promise<{ page: Page; done: () => Promise<void> }> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("request", (sent) => {
      if (!sent.url().startsWith(served.origin + "/")) problems.push(`request to ${sent.url()}`);
    });
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    await page.goto(served.url);
    await expect.poll(() => page.locator("tr.run").count()).toBe(4);
    return {
      page,
      done: async () => {
        await context.close();
        expect(problems).toEqual([]);
      },
    };
  }

  async function openRun(page: Page, id: string): Promise<void> {
    await page.locator(`tr.run[data-id="${id}"]`).click();
    await expect.poll(() => page.locator("#detail h2").count()).toBe(1);
    await expect.poll(() => page.locator("#run-link").textContent()).toBe(id);
  }

  it("keeps tokens, cost and duration in view at 1280 and 1920 px, and no click moves the detail pane sideways", async () => {
    for (const width of WIDTHS) {
      const { page, done } = await openPage(width);
      expect(await page.locator("#runs th").allTextContents()).toEqual(["when", "tactic · model · input", "status", "tokens", "cost", "duration"]);
      expect(await layoutProblems(page)).toEqual([]);
      for (const id of [ids.weather, ids.failed, ids.pipeline, ids.salary]) {
        await openRun(page, id);
        const steps = page.locator("#timeline .step");
        // Every step, the last (at the right end of the timeline) included.
        for (let index = 0; index < (await steps.count()); index += 1) {
          await steps.nth(index).click();
          expect(await layoutProblems(page), `run ${id}, step ${index}`).toEqual([]);
        }
        await page.screenshot({ path: path.join(shots, `run-${id === ids.salary ? "code-action" : id === ids.pipeline ? "pipeline" : id === ids.failed ? "failed" : "weather"}-${width}.png`) });
      }
      await done();
    }
  });

  it("shows a run's input, answer and timeline, and a tool call's arguments and result", async () => {
    const { page, done } = await openPage(1280);
    expect(await page.locator("tr.run .status").allTextContents()).toEqual(["ok", "ok", "error", "ok"]);
    await openRun(page, ids.weather);
    expect(await page.locator("#run-input").textContent()).toBe("Paris and Tokyo?");
    expect(await page.locator("#run-output").textContent()).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.");
    const steps = page.locator("#timeline .step");
    expect(await steps.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-kind")))).toEqual(["model", "tool", "tool", "model"]);
    await steps.nth(1).click();
    await page.locator("#tool-arguments").waitFor();
    expect(JSON.parse((await page.locator("#tool-arguments").textContent())!)).toEqual({ city: "Paris" });
    expect(await page.locator("#tool-result").textContent()).toContain("Sunny, 22 degrees celsius in Paris");
    await steps.nth(3).click();
    await expect.poll(() => page.locator("#model-reply").textContent()).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.");
    await openRun(page, ids.failed);
    expect(await page.locator("#run-error").textContent()).toContain("no scripted turn left");
    await done();
  });

  it("names the agent of each chat bar", async () => {
    const { page, done } = await openPage(1280);
    await openRun(page, ids.pipeline);
    const steps = page.locator("#timeline .step");
    expect(await steps.locator(".label .text").allTextContents()).toEqual([expect.stringMatching(/^chat writer · scripted:/), expect.stringMatching(/^chat editor · scripted:/)]);
    await steps.nth(1).click();
    await expect.poll(() => page.locator("#step-detail h3").textContent()).toBe("Model call 2 · editor · round 1");
    await openRun(page, ids.salary);
    expect(await steps.nth(0).locator(".label .text").textContent()).toMatch(/^chat analyst · scripted:/);
    await done();
  });

  it("shows each program of a code-action run: its code, every bridged call, and what it answered", async () => {
    const { page, done } = await openPage(1920);
    await openRun(page, ids.salary);
    const steps = page.locator("#timeline .step");
    expect(await steps.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-kind")))).toEqual(["model", "program"]);
    expect(await steps.nth(1).locator(".label .text").textContent()).toBe("program 1 attempt 1 · ok · 51 calls");
    const program = page.locator("section.program");
    expect(await program.count()).toBe(1);
    expect(await program.locator("h3").textContent()).toMatch(/^Program 1 · attempt 1 · ok · 51 bridged calls · /);
    expect(await program.locator(".program-code").textContent()).toContain("final_answer(total)");
    expect(await program.locator(".tally").textContent()).toBe("51 bridged calls: list_employees ×1, get_employee ×50");
    expect(await program.locator("tr.bridged-call td:nth-child(2)").allTextContents()).toEqual(["list_employees", ...Array<string>(50).fill("get_employee")]);
    expect(await program.locator("tr.bridged-call td:nth-child(3)").allTextContents()).toEqual(Array<string>(51).fill("ok"));
    expect(await program.locator("tr.bridged-call td.digest").first().textContent()).toMatch(/^[0-9a-f]{16}$/);
    expect(await program.locator(".program-output").textContent()).toBe("1031760");
    await steps.nth(1).click();
    await expect.poll(() => page.locator("section.program.highlight").count()).toBe(1);
    await done();
  });

  it("gives every run its own link: the address follows the open run, opens it in a new tab, and Back and Forward follow it", async () => {
    const { page, done } = await openPage(1280);
    for (const id of [ids.weather, ids.pipeline, ids.salary]) {
      await openRun(page, id);
      expect(page.url()).toBe(`${served.origin}/runs/${id}`);
      expect(await page.locator("tr.run.selected").getAttribute("data-id")).toBe(id);
    }
    expect(await page.locator(`tr.run[data-id="${ids.weather}"] a.run-link`).getAttribute("href")).toBe(`/runs/${ids.weather}`);
    const tab = await page.context().newPage();
    await tab.goto(`${served.origin}/runs/${ids.weather}`);
    await expect.poll(() => tab.locator("#run-input").textContent()).toBe("Paris and Tokyo?");
    expect(await tab.locator("tr.run.selected").getAttribute("data-id")).toBe(ids.weather);
    await tab.close();
    // An address with a malformed escape names no run: the page still shows the list.
    const malformed = await page.context().newPage();
    await malformed.goto(`${served.origin}/runs/%E0`);
    await expect.poll(() => malformed.locator(`tr.run[data-id="${ids.weather}"]`).count()).toBe(1);
    expect(await malformed.locator("#detail").textContent()).toBe("Select a run.");
    await malformed.close();
    await page.goBack();
    expect(page.url()).toBe(`${served.origin}/runs/${ids.pipeline}`);
    await expect.poll(() => page.locator("#run-input").textContent()).toBe("rain");
    await page.goBack();
    await page.goBack();
    expect(page.url()).toBe(`${served.origin}/`);
    await expect.poll(() => page.locator("#detail").textContent()).toBe("Select a run.");
    await page.goForward();
    await expect.poll(() => page.locator("#run-input").textContent()).toBe("Paris and Tokyo?");
    await done();
  });

  it("opens with the printed address, takes the token out of the address bar, and shows nothing to a browser without the cookie", async () => {
    const { page, done } = await openPage(1280);
    expect(page.url()).toBe(`${served.origin}/`);
    await page.reload();
    await expect.poll(() => page.locator("tr.run").count()).toBe(4);
    await done();
    const stranger = await browser.newPage();
    for (const target of ["/", `/runs/${ids.weather}`, "/api/runs", `/api/runs/${ids.weather}`]) expect((await stranger.goto(served.origin + target))!.status(), target).toBe(401);
    expect(await stranger.content()).not.toContain("Paris");
    await stranger.close();
  });
});

describe.skipIf(!CHROMIUM && !process.env.CI)("lllm logs serve's list, in a real browser", { timeout: 300_000 }, () => {
  let browser: Browser;
  beforeAll(async () => {
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ["--no-sandbox"] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stopViewers();
  });

  it("filters on the server by tactic, status, batch, dates and words, and pages by key, each view at its own address", async () => {
    const home = tempDir();
    const day = (date: number, hour: number): number => new Date(2026, 0, date, hour).getTime();
    // A batch of 100 items floods the list; 30 runs of their own, over three days, around it.
    const runs: SeedRun[] = [
      ...Array.from({ length: 30 }, (_, index): SeedRun => ({ startedAt: day(10 + (index % 3), 9) + index * 1000, tactic: index % 2 ? "alpha" : "beta", status: index % 5 === 0 ? "error" : "ok", input: `single ${index} about ${index % 3 === 0 ? "Oslo" : "Rome"}` })),
      ...Array.from({ length: 100 }, (_, index): SeedRun => ({ startedAt: day(11, 15) + index * 1000, tactic: "gamma", batchId: "01BATCH0000000000000000000", input: `item ${index}` })),
    ];
    seedRuns(path.join(home, "logs.db"), runs);
    const served = await serve(home);
    const shots = SCREENSHOTS ?? tempDir();

    for (const width of WIDTHS) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      await page.goto(served.url);
      const count = page.locator("#count");
      const rows = page.locator("tr.run");
      await expect.poll(() => count.textContent()).toBe("1–50 of 130 runs");
      expect(await rows.count()).toBe(50);
      expect(await page.locator("#newer").isDisabled()).toBe(true);

      await page.locator("#older").click();
      await expect.poll(() => count.textContent()).toBe("51–100 of 130 runs");
      expect(page.url()).toMatch(new RegExp(`^${served.origin}/\\?before=[0-9A-Z]{26}$`));
      await page.locator("#older").click();
      await expect.poll(() => count.textContent()).toBe("101–130 of 130 runs");
      expect(await page.locator("#older").isDisabled()).toBe(true);
      await page.locator("#newer").click();
      await expect.poll(() => count.textContent()).toBe("51–100 of 130 runs");
      await page.locator("#newest").click();
      await expect.poll(() => count.textContent()).toBe("1–50 of 130 runs");
      await page.locator("#oldest").click();
      await expect.poll(() => count.textContent()).toBe("81–130 of 130 runs");
      await page.locator("#newest").click();
      await expect.poll(() => count.textContent()).toBe("1–50 of 130 runs");

      // The batch's items out of the way; then only the batch.
      await page.locator("#batch").selectOption("none");
      await expect.poll(() => count.textContent()).toBe("1–30 of 30 runs");
      expect(new URL(page.url()).searchParams.get("batch")).toBe("none");
      await page.locator("#batch").selectOption("01BATCH0000000000000000000");
      await expect.poll(() => count.textContent()).toBe("1–50 of 100 runs");
      expect(await rows.locator(".tactic").allTextContents()).toEqual(Array(50).fill("gamma"));
      await page.locator("#clear").click();
      await expect.poll(() => count.textContent()).toBe("1–50 of 130 runs");

      await page.locator("#tactic").selectOption("alpha");
      await expect.poll(() => count.textContent()).toBe("1–15 of 15 runs");
      await page.locator("#status").selectOption("error");
      await expect.poll(() => count.textContent()).toBe("1–3 of 3 runs");
      await page.locator("#clear").click();

      await page.locator("#q").fill("oslo");
      await page.locator("#q").press("Enter");
      await expect.poll(() => count.textContent()).toBe("1–10 of 10 runs");
      expect(await rows.locator(".preview").allTextContents()).toEqual(expect.arrayContaining(["single 0 about Oslo"]));
      await page.locator("#clear").click();

      await page.locator("#from").fill("2026-01-11");
      await page.locator("#to").fill("2026-01-11");
      await expect.poll(() => count.textContent()).toBe("1–50 of 110 runs");
      await page.locator("#batch").selectOption("none");
      await expect.poll(() => count.textContent()).toBe("1–10 of 10 runs");
      // The view is its address: reloaded, it shows the same runs and the same filters.
      const address = page.url();
      expect(Object.fromEntries(new URL(address).searchParams)).toEqual({ batch: "none", from: "2026-01-11", to: "2026-01-11" });
      await page.reload();
      await expect.poll(() => count.textContent()).toBe("1–10 of 10 runs");
      expect(await page.locator("#from").inputValue()).toBe("2026-01-11");
      expect(await page.locator("#batch").inputValue()).toBe("none");
      expect(await layoutProblems(page)).toEqual([]);
      await rows.first().click();
      await page.locator("#run-output").waitFor();
      expect(page.url()).toMatch(new RegExp(`^${served.origin}/runs/[0-9A-Z]{26}\\?batch=none&from=2026-01-11&to=2026-01-11$`));
      expect(await layoutProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(shots, `filtered-${width}.png`) });
      await context.close();
    }
  });
  it("shows the runs of lllm test: each case's mark and name, the failed ones alone, and the run behind each a click away", async () => {
    const home = tempDir();
    const project = weatherProject({ withCassettes: true });
    const tool = path.join(project.weather, "tools", "to_fahrenheit.ts");
    writeFileSync(tool, readFileSync(tool, "utf8").replace("* 9) / 5 + 32", "* 9) / 5"));
    const tested = await cli(home, ["test", project.tests, "--offline"]);
    expect(tested.code, tested.stderr).toBe(1);
    // One run a case, two for the conversation; each marked with its case's outcome (lllm logs --json too).
    const logged = await listRuns(home);
    expect(logged.map((run) => [run.test_case, run.test_status]).sort()).toEqual([["a conversation", "failed"], ["a conversation", "failed"], ["asks for a city", "passed"], ["two cities", "passed"]]);
    const failed = logged.find((run) => run.test_case === "a conversation" && run.status === "error")!;
    const served = await serve(home);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(served.url);
    const rows = page.locator("tr.run");
    await expect.poll(() => rows.count()).toBe(4);
    expect((await rows.locator(".test").allTextContents()).sort()).toEqual(["✓ asks for a city · ", "✓ two cities · ", "✗ a conversation · ", "✗ a conversation · "]);
    expect(await rows.locator(".test.failed").count()).toBe(2);
    await page.locator("#test").selectOption("failed");
    await expect.poll(() => page.locator("#count").textContent()).toBe("1–2 of 2 runs");
    expect(new URL(page.url()).searchParams.get("test")).toBe("failed");
    await page.locator(`tr.run[data-id="${failed.id}"]`).click();
    await page.locator("#run-error").waitFor();
    expect(await page.locator("#run-test").textContent()).toBe(` · test case a conversation failed of ${path.join(project.tests, "weather.test.yaml")}`);
    expect(await page.locator("#run-error").textContent()).toContain("the replay diverged at agent `weather_bot`'s turn 4 of 4");
    expect(await layoutProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS ?? tempDir(), "test-cases-1280.png") });
    await page.locator("#test").selectOption("passed");
    await expect.poll(() => page.locator("#count").textContent()).toBe("1–2 of 2 runs");
    await context.close();
  });

  it("marks where a run was resumed, and says of a stopped run how to go on with it", async () => {
    const project = await durableProject({ rounds: 6 });
    try {
      await project.crashInTool("look", 4);
      const resumed = await project.run(["run", "--resume"]);
      expect(resumed.code, resumed.stderr).toBe(0);
      // A second run, stopped and left so.
      project.blockTool("look", 2);
      const second = project.start(["run", project.tactic(), "--input", "again"]);
      expect(await waitForFile(path.join(project.dir, "blocked")), second.stderr()).toBe(true);
      process.kill(second.pid, "SIGKILL");
      await second.exit();
      const [stopped, done] = await listRuns(project.home);
      const served = await serve(project.home);
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(served.url);
      await expect.poll(() => page.locator("tr.run").count()).toBe(2);
      await page.locator(`tr.run[data-id="${done!.id}"]`).click();
      await expect.poll(() => page.locator("#run-link").textContent()).toBe(done!.id);
      expect(await page.locator("#run-resumed").textContent()).toBe(" · resumed 1 time (lllm run --resume)");
      // Five rounds recorded before the stop (the fifth cut short in its tool call), the rest after the mark.
      const steps = page.locator("#timeline .step");
      expect(await steps.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-kind")))).toEqual(["model", "tool", "model", "tool", "model", "tool", "model", "tool", "model", "resume", "tool", "model", "tool", "model"]);
      await steps.nth(9).click();
      await expect.poll(() => page.locator("#step-detail h3").textContent()).toBe("Resumed · attempt 2");
      expect(await layoutProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(SCREENSHOTS ?? tempDir(), "resumed-1280.png") });
      await page.locator(`tr.run[data-id="${stopped!.id}"]`).click();
      await expect.poll(() => page.locator("#run-resumable").textContent()).toBe(`It stopped before its end; go on from where it stopped with: lllm run --resume ${stopped!.id}`);
      await context.close();
    } finally {
      await project.close();
    }
  });
});
