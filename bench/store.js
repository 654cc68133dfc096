// The run store's cost: the 100-round tool loop with every model and tool call logged into a fresh logs.db,
// against the same loop with logging off (the budget: at most 5% slower).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export async function storeSuite({ runs, root }) {
  const { Agent, Prompt, tool } = await import("../dist/index.js");
  const { ScriptedModel } = await import("../dist/testing/index.js");
  const { RunRecorder } = await import("../dist/store/RunRecorder.js");
  const { RunTally } = await import("../dist/store/RunTally.js");
  const { PriceTable } = await import("../dist/store/PriceTable.js");
  const { environmentSecrets, redactorOf } = await import("../dist/util/redact.js");
  const rounds = 100;
  const echo = tool({ name: "echo", description: "Echo", parameters: { n: { type: "integer" } }, run: ({ n }) => `n=${n}` });
  const turns = () => [...Array.from({ length: rounds }, (_, n) => ({ tool_calls: [{ name: "echo", arguments: { n } }] })), "done"];
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-store-"));

  async function once(logging) {
    const start = performance.now();
    const recorder = logging
      ? await RunRecorder.start({
          file: path.join(home, "logs.db"),
          tally: new RunTally(PriceTable.load()),
          redactor: redactorOf(environmentSecrets(process.env)),
          warn: (message) => {
            throw new Error(message);
          },
          run: { tacticPath: "bench.yaml", tacticName: "bench", configDigest: "-", input: "go", vars: {}, models: ["scripted"], lllmVersion: "bench" },
        })
      : undefined;
    const model = new ScriptedModel(turns());
    const agent = new Agent({ name: "bench", systemPrompt: new Prompt({ path: "bench/system", prompt: "Bench.", functionList: [echo] }), model, maxInterruptSteps: rounds + 1, ...(recorder ? { onEvent: (event) => recorder.onEvent(event) } : {}) });
    agent.open("main");
    agent.receive("go");
    const message = await agent.respond();
    recorder?.finish({ output: message.content });
    return performance.now() - start;
  }

  const on = [];
  const off = [];
  try {
    for (let run = 0; run < runs + 2; run++) {
      const a = await once(false);
      const b = await once(true);
      if (run >= 2) {
        off.push(a);
        on.push(b);
      }
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const base = median(off);
  const logged = median(on);
  console.log(`\nRun store: the ${rounds}-round tool loop, logging off against on (median of ${runs} runs)`);
  console.log(`  logging off (baseline)             ${base.toFixed(1).padStart(8)} ms`);
  console.log(`  logging on (logs.db, WAL)          ${logged.toFixed(1).padStart(8)} ms   ${(logged / base).toFixed(2)}x baseline`);
  await wholeRun({ runs, root });
}

/**
 * What a user notices: `lllm run` with 100 tool rounds against a local mock server, logging on (a fresh logs.db
 * each time, as a first run) against `LLLM_LOG=0`, interleaved so drifting machine load hits both alike.
 */
async function wholeRun({ runs, root }) {
  const { spawn } = await import("node:child_process");
  const { pathToFileURL } = await import("node:url");
  const { startMockOpenAIServer } = await import(pathToFileURL(path.join(root, "dist", "testing", "index.js")).href);
  const server = await startMockOpenAIServer({
    handler: (body) => {
      const done = (body.messages ?? []).filter((message) => message.role === "tool").length;
      return done < 100 ? { tool_calls: [{ name: "get_weather", arguments: { city: `City${done}` } }] } : "Sunny everywhere.";
    },
  });
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-store-run-"));
  const once = (logging) =>
    new Promise((resolve, reject) => {
      const env = { ...process.env, NO_COLOR: "1", OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-bench", LLLM_HOME: home, LLLM_LOG: logging ? "1" : "0" };
      rmSync(path.join(home, "logs.db"), { force: true });
      const start = performance.now();
      const child = spawn(process.execPath, [path.join(root, "bin", "lllm.js"), "run", path.join(root, "bench", "fixtures", "rounds.yaml"), "--model", "bench-100", "--no-stream", "--input", "Weather?"], { env, stdio: "ignore" });
      child.on("error", reject);
      child.on("close", (status) => (status === 0 ? resolve(performance.now() - start) : reject(new Error(`lllm run exited ${status}`))));
    });
  const on = [];
  const off = [];
  try {
    for (let run = 0; run < runs + 1; run++) {
      const a = await once(false);
      const b = await once(true);
      if (run > 0) {
        off.push(a);
        on.push(b);
      }
    }
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
  console.log(`\nRun store: lllm run, 100 tool rounds on a local mock server, LLLM_LOG=0 against logging on (median of ${runs}; target <= 1.05x)`);
  console.log(`  logging off (baseline)             ${median(off).toFixed(0).padStart(8)} ms`);
  console.log(`  logging on                         ${median(on).toFixed(0).padStart(8)} ms   ${(median(on) / median(off)).toFixed(2)}x baseline`);
}
