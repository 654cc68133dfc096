import type { Usage } from "../providers/Model.js";
import type { RunUsage } from "./TacticRun.js";

/** Tokens and model calls of a run as they happen (camelCase, like the rest of the library). */
export class UsageCounter {
  promptTokens = 0;
  completionTokens = 0;
  llmCalls = 0;

  /** Count one model reply. */
  add(usage: Usage): void {
    this.promptTokens += usage.promptTokens;
    this.completionTokens += usage.completionTokens;
    this.llmCalls += 1;
  }

  get totalTokens(): number {
    return this.promptTokens + this.completionTokens;
  }

  /** The `usage` of the run's report, as JSON writes it (snake_case). */
  toReport(): RunUsage {
    return { prompt_tokens: this.promptTokens, completion_tokens: this.completionTokens, total_tokens: this.totalTokens, llm_calls: this.llmCalls };
  }
}
