import { fileURLToPath } from "node:url";

/** The plain assistant `lllm chat` talks to when no tactic is named (its model: `--model`, else the settings'). */
export const ASSISTANT_TACTIC = fileURLToPath(new URL("../cli/chatAssistant.yaml", import.meta.url));
