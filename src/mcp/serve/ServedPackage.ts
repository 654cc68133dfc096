import type { FunctionTool } from "../../tools/FunctionTool.js";
import type { ServedPrompt } from "./packagePrompts.js";
import type { ServedResource, ServedTemplate } from "./packageResources.js";

/** Everything a package serves, loaded once and shared by every connection (see `serverFor`). */
export interface ServedPackage {
  name: string;
  version: string;
  description?: string;
  tools: Map<string, FunctionTool>;
  prompts: Map<string, ServedPrompt>;
  resources: Map<string, ServedResource>;
  templates: ServedTemplate[];
  cwd: string;
  /** What could not be served, with the reason (declarations without implementation, broken prompt files…). */
  skipped: Array<{ what: string; reason: string }>;
}
