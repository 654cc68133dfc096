import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, ProviderError } from "../../src/errors.js";
import { createModel, OpenAIChatModel } from "../../src/providers/index.js";
import { ScriptedModel, startMockOpenAIServer } from "../../src/testing/index.js";
import type { MockOpenAIServer } from "../../src/testing/index.js";

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function thrown(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

const ASK = { messages: [{ role: "user" as const, content: "hi" }] };

describe("createModel", () => {
  it("fails at once, with exit code 2, when OPENAI_API_KEY is missing, and says how to set it", () => {
    const error = thrown(() => createModel({ model: "gpt-4o-mini", env: {} }));
    expect(error.code).toBe("provider_missing_key");
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(error.hint).toContain("export OPENAI_API_KEY=");
    expect(error.hint).toContain("invoker_config.api_key_env");
  });

  it("names GROQ_API_KEY for a groq/ model without it; an empty variable counts as missing", () => {
    const error = thrown(() => createModel({ model: "groq/llama-3.1-70b", env: { OPENAI_API_KEY: "test", GROQ_API_KEY: "" } }));
    expect(error.code).toBe("provider_missing_key");
    expect(error.message).toContain("GROQ_API_KEY");
  });

  it("needs no key for ollama/, and sends the model name without the prefix to the base_url override", async () => {
    server = await startMockOpenAIServer({ script: ["Hello from llama."] });
    const model = createModel({ model: "ollama/llama3", invokerConfig: { base_url: server.url }, env: {} });
    expect(model.name).toBe("ollama/llama3");
    const response = await model.generate(ASK);
    expect(response.message.content).toBe("Hello from llama.");
    expect(server.requests[0]!.body.model).toBe("llama3");
  });

  it("keeps the rest of the name after the prefix (openrouter/openai/gpt-4o) and uses the route's key", async () => {
    server = await startMockOpenAIServer({ script: ["ok"] });
    const model = createModel({ model: "openrouter/openai/gpt-4o", invokerConfig: { base_url: server.url }, env: { OPENROUTER_API_KEY: "or-key" } });
    await model.generate(ASK);
    expect(server.requests[0]!.body.model).toBe("openai/gpt-4o");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer or-key");
  });

  it("uses OPENAI_BASE_URL from the given env for the openai route, and accepts invoker: litellm", async () => {
    server = await startMockOpenAIServer({ script: ["ok"] });
    const model = createModel({ model: "openai/gpt-4o-mini", invoker: "litellm", env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(model).toBeInstanceOf(OpenAIChatModel);
    await model.generate(ASK);
    expect(server.requests[0]!.body.model).toBe("gpt-4o-mini");
  });

  it("reads vllm/'s base URL from VLLM_BASE_URL, and asks for it when it is missing", async () => {
    const error = thrown(() => createModel({ model: "vllm/qwen", env: {} }));
    expect(error.code).toBe("provider_missing_base_url");
    expect(error.hint).toContain("export VLLM_BASE_URL=");
    server = await startMockOpenAIServer({ script: ["ok"] });
    await createModel({ model: "vllm/qwen", env: { VLLM_BASE_URL: server.url } }).generate(ASK);
    expect(server.requests[0]!.body.model).toBe("qwen");
  });

  it("sends a name with an unknown prefix whole to a custom base URL, and rejects it (with a suggestion) otherwise", async () => {
    server = await startMockOpenAIServer({ script: ["ok"] });
    await createModel({ model: "Qwen/Qwen2.5-7B", invokerConfig: { base_url: server.url }, env: {} }).generate(ASK);
    expect(server.requests[0]!.body.model).toBe("Qwen/Qwen2.5-7B");
    const error = thrown(() => createModel({ model: "olama/llama3", env: {} }));
    expect(error.code).toBe("config_unknown_provider");
    expect(error.message).toContain("ollama/");
  });

  it("requires the variable named by invoker_config.api_key_env", () => {
    const error = thrown(() => createModel({ model: "ollama/llama3", invokerConfig: { api_key_env: "MY_OLLAMA_KEY" }, env: {} }));
    expect(error.message).toContain("MY_OLLAMA_KEY");
  });

  it("sends a provider's own key variable, named by api_key_env, to that provider's server only", () => {
    const env = { ANTHROPIC_API_KEY: "sk-ant-1", OPENROUTER_API_KEY: "sk-or-1", GEMINI_API_KEY: "g-1" };
    const error = thrown(() => createModel({ model: "gpt-4o-mini", invokerConfig: { api_key_env: "ANTHROPIC_API_KEY" }, env }));
    expect(error.code).toBe("config_invalid_invoker_config");
    expect(error.message).toBe("invoker_config.api_key_env names ANTHROPIC_API_KEY, the key of `anthropic/` models, but model `gpt-4o-mini` is sent to https://api.openai.com/v1: the key would go to a server that is not anthropic's");
    expect(thrown(() => createModel({ model: "groq/llama3-70b", invokerConfig: { api_key_env: "GEMINI_API_KEY" }, env })).code).toBe("config_invalid_invoker_config");
    // Its own provider's server, by prefix or by the variable that moves it; a base_url written beside it; a variable of the user's.
    expect(() => createModel({ model: "openrouter/meta/llama-3-8b", invokerConfig: { api_key_env: "OPENROUTER_API_KEY" }, env })).not.toThrow();
    expect(() => createModel({ model: "gpt-4o-mini", invokerConfig: { api_key_env: "OPENROUTER_API_KEY" }, env: { ...env, OPENAI_BASE_URL: "https://openrouter.ai/api/v1" } })).not.toThrow();
    expect(() => createModel({ model: "gpt-4o-mini", invokerConfig: { api_key_env: "ANTHROPIC_API_KEY", base_url: "https://gateway.example/v1" }, env })).not.toThrow();
    expect(() => createModel({ model: "gpt-4o-mini", invokerConfig: { api_key_env: "MY_KEY" }, env: { MY_KEY: "k" } })).not.toThrow();
  });

  it("rejects an unknown invoker or api_type, listing the valid ones", () => {
    const invoker = thrown(() => createModel({ model: "gpt-4o", invoker: "langchain", env: { OPENAI_API_KEY: "k" } }));
    expect(invoker.message).toContain("litellm, openai");
    const apiType = thrown(() => createModel({ model: "gpt-4o", apiType: "responses" as "response", env: { OPENAI_API_KEY: "k" } }));
    expect(apiType.message).toContain("completion, response");
    expect(apiType.message).toContain("`response`");
  });

  it("rejects a base_url that is not a URL", () => {
    const error = thrown(() => createModel({ model: "ollama/llama3", invokerConfig: { base_url: "localhost:11434" }, env: {} }));
    expect(error.code).toBe("config_invalid_base_url");
    expect(error.message).toContain("it begins `localhost:`");
  });

  it("never quotes a base URL that is no URL: it is often a key set in the wrong variable", () => {
    for (const value of ["sk-proj-Q7vX9mN4pL8rWq2s", "sk-proj:Q7vX9mN4pL8rWq2s"]) {
      const error = thrown(() => createModel({ model: "gpt-4o", env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: value } }));
      expect(error.code).toBe("config_invalid_base_url");
      expect(error.message).toContain("OPENAI_BASE_URL");
      expect(`${error.message} ${error.hint ?? ""}`).not.toContain("Q7vX9mN4pL8rWq2s");
    }
  });

  it("reports a 401 from a server without a key as provider_auth saying no key was sent", async () => {
    server = await startMockOpenAIServer({ failures: [{ status: 401 }] });
    const error = await createModel({ model: "lmstudio/phi", invokerConfig: { base_url: server.url }, env: {} })
      .generate(ASK)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe("provider_auth");
    expect((error as ProviderError).message).toContain("no API key was sent");
  });

  it("loads scripted:<file> relative to cwd", async () => {
    const folder = mkdtempSync(join(tmpdir(), "lllm-scripted-"));
    writeFileSync(join(folder, "script.yaml"), "- Hello.\n");
    const model = createModel({ model: "scripted:script.yaml", cwd: folder });
    expect(model).toBeInstanceOf(ScriptedModel);
    expect(model.name).toBe("scripted:script.yaml");
    expect((await model.generate(ASK)).message.content).toBe("Hello.");
  });
});
