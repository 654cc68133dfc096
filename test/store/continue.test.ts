import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { cli, listRuns } from "./storeTestHelpers.js";

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
});

type WireMessage = { role: string; content?: string | null; tool_calls?: unknown[] };

describe("lllm run --continue", { timeout: 180_000 }, () => {
  it("continues the last run's dialog (tools included) with a new input; an id picks another run", async () => {
    const home = tempDir();
    server = await startMockOpenAIServer({
      script: [{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, "Sunny in Paris.", "Yes, take sunglasses.", "Paris, as before."],
    });
    const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url };
    expect((await cli(home, ["run", loop, "--input", "Weather in Paris?", "--no-stream"], { env })).stdout).toBe("Sunny in Paris.\n");
    const [first] = await listRuns(home);

    // No tactic named: the earlier run's.
    const next = await cli(home, ["run", "--continue", "--input", "Do I need sunglasses?", "--no-stream"], { env });
    expect(next).toMatchObject({ code: 0, stdout: "Yes, take sunglasses.\n" });
    const posts = server.requests.filter((request) => request.method === "POST");
    const sent = posts[2]!.body.messages as WireMessage[];
    expect(sent.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    expect(sent[1]!.content).toBe("Weather in Paris?");
    expect(sent[4]!.content).toBe("Sunny in Paris.");
    expect(sent[5]!.content).toBe("Do I need sunglasses?");
    expect((await listRuns(home))[0]).toMatchObject({ continues_run: first!.id, status: "ok" });

    // The tactic given after the flag is the tactic, not an id; an id prefix continues that run.
    const again = await cli(home, ["run", "--continue", first!.id.slice(0, 22), loop, "--input", "Which city?", "--no-stream"], { env });
    expect(again).toMatchObject({ code: 0, stdout: "Paris, as before.\n" });
    const third = server.requests.filter((request) => request.method === "POST")[3]!.body.messages as WireMessage[];
    expect(third.map((message) => message.content ?? null).slice(-2)).toEqual(["Sunny in Paris.", "Which city?"]);
  });

  it("says clearly when there is nothing to continue", async () => {
    const home = tempDir();
    const none = await cli(home, ["run", "--continue", "--input", "x"]);
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toContain("--continue: no runs logged yet");
    // What to do next, for each command that needs a logged run: make one.
    for (const args of [["run", "--continue", "--input", "x"], ["run", "--resume"], ["logs", "show", "last"]]) {
      const result = await cli(home, args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toContain("run one first, e.g. lllm run TACTIC --input …");
    }
    const missing = await cli(home, ["run", "--input", "x"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("missing the tactic to run");
  });
});
