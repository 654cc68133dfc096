import { readFileSync } from "node:fs";
import { writeOut } from "./output.js";

/** `lllm schema tactic|test|package|proxy|settings`: print the JSON Schema so editors can validate and complete the files. */
export async function schemaCommand(kind: "tactic" | "test" | "package" | "proxy" | "settings"): Promise<void> {
  if (kind === "settings") {
    // Built by code (src/config/settingsSchema.ts), the one the settings are checked against.
    const { settingsSchema } = await import("../config/settingsSchema.js");
    writeOut(JSON.stringify({ $schema: "http://json-schema.org/draft-07/schema#", ...settingsSchema() }, null, 2));
    return;
  }
  const text = readFileSync(new URL(`../../schemas/${kind}.schema.json`, import.meta.url), "utf8");
  writeOut(text.trimEnd());
}
