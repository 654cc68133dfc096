import { readFileSync } from "node:fs";
import { writeOut } from "./output.js";

/** `lllm schema tactic|package`: print the JSON Schema so editors can validate and complete the files. */
export async function schemaCommand(kind: "tactic" | "package" | "proxy"): Promise<void> {
  const text = readFileSync(new URL(`../../schemas/${kind}.schema.json`, import.meta.url), "utf8");
  writeOut(text.trimEnd());
}
