/** Test helpers, published as `lllm/testing`: a scripted model, mock servers, and `expectRun` (the assertions of `lllm test`). */
export { ScriptedModel, type ScriptedModelOptions } from "../providers/ScriptedModel.js";
export type { ScriptedTurn, ScriptedToolCall } from "../providers/ScriptedTurn.js";
export {
  startMockOpenAIServer,
  type InjectedFailure,
  type MockHandler,
  type MockOpenAIServer,
  type MockOpenAIServerOptions,
  type MockRequestBody,
  type RecordedRequest,
} from "./mockOpenAIServer.js";
export { startMockAnthropicServer, type AnthropicFailure, type MockAnthropicServer, type MockAnthropicServerOptions } from "./mockAnthropicServer.js";
export { startMockGeminiServer, type GeminiFailure, type MockGeminiServer, type MockGeminiServerOptions } from "./mockGeminiServer.js";
export { expectRun, RunAssertionError, type ExpectRunOptions, type RunExpectation, type RunToCheck } from "./expectRun.js";
export { MockBatchJobs, type MockBatchJob, type MockBatchOptions, type MockBatchOutcome, type MockBatchResult } from "./MockBatchJobs.js";
