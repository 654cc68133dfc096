import { describe, expect, it } from "vitest";
import * as lllm from "../src/index.js";
import * as testing from "../src/testing/index.js";

// The public API is an explicit list: adding or removing a name must be a deliberate change to this test.
describe("public exports", () => {
  it("lllm", () => {
    expect(Object.keys(lllm).sort()).toEqual(
      [
        "Agent", "BudgetError", "RunLimitError", "RunBudget", "FallbackModel", "noticeFirstRefusal", "BridgeError", "PythonKernel", "detectGvisor", "runCodeAction", "codeActionAgent", "toolChainTool", "ArtifactStore", "approveAll", "approveNone", "askOnTerminal", "CodeActionBudgetError", "CodeActionTimeoutError", "CodeActionError", "SubprocessSandbox", "closeAllKernels", "detectIsolation", "MCP", "McpConnections", "McpToolError", "assertProviderMcpSupported", "createPackageServer", "tacticAsFunction", "tactic", "ProxyCallError", "ProxyManager", "loadProxies", "proxy", "ConfigError", "Dialog", "Function", "FunctionCall", "FunctionTool", "InterruptedError", "LllmError",
        "ModelBehaviorError", "OpenAIChatModel", "OpenAIResponsesModel", "Package", "ParseError", "Prompt", "ProviderError",
        "REPEATED_CALL_TEXT", "ROUND_LIMIT_TEXT", "Registry", "SandboxError", "ToolError", "UnknownToolError", "createModel",
        "declaration", "formatLocation", "functionFromDeclaration", "lllmHome", "loadProjectSettings", "loadTacticFile",
        "normalizeParameters", "packageSchema", "parseRef", "prepareTactic", "readManifest", "runRecorded", "runTactic", "tacticSchema",
        "serve", "runTests", "textReporter", "jsonReporter", "junitReporter", "testRunJson", "junitXml",
        "toFunctionTool", "tool", "toolResult", "resource", "resourceTemplate", "z",
      ].sort(),
    );
  });

  it("lllm/testing", () => {
    expect(Object.keys(testing).sort()).toEqual(["MockBatchJobs", "RunAssertionError", "ScriptedModel", "expectRun", "startMockAnthropicServer", "startMockGeminiServer", "startMockOpenAIServer"]);
  });

  it("the subpaths resolve through package.json exports (the built files)", async () => {
    const viaPackage = (await import("lllm/testing")) as Record<string, unknown>;
    expect(typeof viaPackage.startMockOpenAIServer).toBe("function");
    const main = (await import("lllm")) as Record<string, unknown>;
    expect(typeof main.tool).toBe("function");
  });
});
