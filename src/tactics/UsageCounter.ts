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

  /** The counts so far, as a plain object (the `usage` of a run's result). */
  toReport(): RunUsage {
    return { promptTokens: this.promptTokens, completionTokens: this.completionTokens, totalTokens: this.totalTokens, llmCalls: this.llmCalls };
  }
}
