import { describe, expect, it } from "vitest";
import { queueConnection, queueTimings, redactQueueUrl } from "../../src/batch/queue/queueConnection.js";
import { unsendableParts } from "../../src/batch/queue/unsendableParts.js";
import { ConfigError } from "../../src/errors.js";

describe("queue URLs as lllm prints them", () => {
  it.each([
    ["redis://:s3cret@host:6379", "redis://[redacted]@host:6379"],
    ["redis://user:s3cret@host:6379/2", "redis://[redacted]@host:6379/2"],
    ["rediss://:p@ss@word@host", "rediss://[redacted]@host"],
    ["redis://host:6379", "redis://host:6379"],
    ["redis:/:s3cret@host", "[redacted]@host"],
  ])("%s is shown as %s", (url, shown) => {
    expect(redactQueueUrl(url)).toBe(shown);
  });

  it("a URL that does not parse is reported without its password", () => {
    let error: unknown;
    try {
      queueConnection("redis://:pa ss@ho st:port");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).not.toContain("pa ss");
    expect((error as ConfigError).message).toContain("redis://[redacted]@ho st:port");
  });
});

describe("queue durations", () => {
  it("come from the environment, with defaults, and a heartbeat's expiry of at least 5 s", () => {
    expect(queueTimings({})).toEqual({ heartbeatMs: 1000, aliveMs: 10_000, noWorkerMs: 30_000, reconnectMs: 60_000, lockMs: 30_000 });
    expect(queueTimings({ LLLM_QUEUE_HEARTBEAT_MS: "100", LLLM_QUEUE_NO_WORKER_MS: "300", LLLM_QUEUE_RECONNECT_MS: "1500", LLLM_QUEUE_LOCK_MS: "2000" })).toEqual({ heartbeatMs: 100, aliveMs: 5000, noWorkerMs: 300, reconnectMs: 1500, lockMs: 2000 });
    expect(queueTimings({ LLLM_QUEUE_RECONNECT_MS: "soon", LLLM_QUEUE_LOCK_MS: "10" }).reconnectMs).toBe(60_000);
    // The tests' shorter expiry: at least 3 heartbeats, else the rule above.
    expect(queueTimings({ LLLM_QUEUE_HEARTBEAT_MS: "100", LLLM_QUEUE_ALIVE_MS: "2500" }).aliveMs).toBe(2500);
    expect(queueTimings({ LLLM_QUEUE_HEARTBEAT_MS: "100", LLLM_QUEUE_ALIVE_MS: "200" }).aliveMs).toBe(5000);
    expect(queueTimings({ LLLM_QUEUE_ALIVE_MS: "2500" }).aliveMs).toBe(10_000);
  });
});

describe("what a tactic sent through Redis as data may not set", () => {
  it("names each key and why", () => {
    const parts = unsendableParts(
      {
        mcp_servers: [{ name: "a", url: "http://x" }, { name: "b", command: "sh" }, { name: "c", url: "https://evil", bearer_token_env: "ANTHROPIC_API_KEY", oauth: { client_secret_env: "SECRET" } }],
        sandbox: { backend: "none", network: true },
        global: { invoker_config: { base_url: "http://elsewhere" }, remote_agents: [{ name: "open", url: "http://agent" }, { name: "vault", url: "https://evil", token_env: "OPENAI_API_KEY" }] },
        // A chain names files too: in a model_name list, in fallback_models.
        agent_configs: [{ name: "bot", model_name: "scripted:/etc/passwd" }, { name: "chain", model_name: ["gpt-4o-mini", "scripted:/etc/x.yaml"], fallback_models: ["scripted:/etc/y.yaml"] }],
      },
      "scripted:x.yaml",
    );
    expect(parts).toEqual([
      "--model scripted:… (a file on the worker)",
      "mcp_servers[1].command (starts `sh` on the worker)",
      "mcp_servers[2].bearer_token_env (would send a variable of the worker to a server the tactic chose)",
      "mcp_servers[2].oauth (would send the worker's client secrets to a server the tactic chose)",
      "global.remote_agents[1].token_env (would send a variable of the worker to an agent the tactic chose)",
      "global.invoker_config (would choose where the worker sends its API keys)",
      "agent_configs[0].model_name: scripted:… (a file on the worker)",
      "agent_configs[1].model_name: scripted:… (a file on the worker)",
      "agent_configs[1].fallback_models: scripted:… (a file on the worker)",
      "sandbox.backend: none (model-written code without isolation on the worker)",
      "sandbox.network (network access for model-written code on the worker)",
    ]);
    expect(unsendableParts({ name: "plain", global: { model_name: "gpt-4o-mini", mcp_servers: [{ name: "remote", url: "https://mcp.example" }] }, sandbox: { network: false } }, null)).toEqual([]);
  });
});
