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

export async function storeSuite({ runs }) {
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
}
