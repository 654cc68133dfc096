import { readFileSync } from "node:fs";
import path from "node:path";
import type { PromptMessage } from "@modelcontextprotocol/sdk/types.js";
import { parseConfigData } from "../../config/parseConfigData.js";
import { formatTemplate, templatePlaceholders } from "../../prompts/formatTemplate.js";
import type { Package } from "../../registry/Package.js";
import { isPlainObject, kindOf } from "../../tools/JsonSchema.js";
import { toContentBlock, type ContentBlock } from "../../tools/ContentBlock.js";
import { summaryLine } from "../../util/firstLine.js";
import { mimeTypeOf } from "./mimeTypeOf.js";

/** One argument of a served prompt. */
export interface ServedPromptArgument {
  name: string;
  description?: string;
  required: boolean;
  /** Used when the client gives no value. */
  default?: string;
  /** Values offered by `completion/complete`. */
  completions: string[];
}

/** A prompt of a package as MCP serves it (`prompts/list`, `prompts/get`). */
export interface ServedPrompt {
  name: string;
  title?: string;
  description: string;
  arguments: ServedPromptArgument[];
  /** The messages with the arguments filled in; throws an Error naming a missing argument. */
  render(args: Record<string, string>): PromptMessage[];
}

const KEYS = ["prompt", "messages", "description", "title", "arguments"];

/**
 * The prompts of a package's `prompts/` folder as MCP prompts. A Markdown or text prompt is one user message; its
 * `{placeholders}` are its arguments (all required) and its first line its description. A YAML prompt may say
 * more (see docs/mcp.md): `description`, `title`, `arguments` (each with `description`, `required`, `default`
 * and `completions`) and, in place of `prompt`, `messages`: a list of `{role, content}` where content is text or
 * a content block (an image may name a `file` of the package). Text anywhere is a template. A prompt file that
 * is not valid is left out, with the reason in `skipped`.
 */
export function packagePrompts(pkg: Package): { prompts: ServedPrompt[]; skipped: Array<{ ref: string; reason: string }> } {
  const prompts: ServedPrompt[] = [];
  const skipped: Array<{ ref: string; reason: string }> = [];
  for (const entry of pkg.prompts.values()) {
    try {
      prompts.push(readServedPrompt(entry.key, entry.file));
    } catch (error) {
      skipped.push({ ref: entry.ref, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return { prompts, skipped };
}

function readServedPrompt(name: string, file: string): ServedPrompt {
  const raw = readFileSync(file, "utf8");
  if (!/\.ya?ml$/.test(file)) {
    const text = raw.trimEnd();
    return {
      name,
      description: summaryLine(text) || `Prompt ${name}`,
      arguments: templatePlaceholders(text).map((argument) => ({ name: argument, required: true, completions: [] })),
      render: (args) => [{ role: "user", content: { type: "text", text: fill(text, args, name) } }],
    };
  }
  const data: unknown = parseConfigData(raw, file);
  if (!isPlainObject(data)) throw new Error(`a YAML prompt file must be a mapping, got ${kindOf(data)}`);
  const unknown = Object.keys(data).filter((key) => !KEYS.includes(key));
  if (unknown.length > 0) throw new Error(`unknown key${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => `\`${key}\``).join(", ")} (the keys are ${KEYS.join(", ")})`);
  if ((data.prompt === undefined) === (data.messages === undefined)) throw new Error("give either `prompt:` (the template text) or `messages:` (a list of {role, content})");
  if (data.prompt !== undefined && typeof data.prompt !== "string") throw new Error(`\`prompt\` must be a string, got ${kindOf(data.prompt)}`);
  for (const key of ["description", "title"]) {
    if (data[key] !== undefined && typeof data[key] !== "string") throw new Error(`\`${key}\` must be a string, got ${kindOf(data[key])}`);
  }
  const messages = data.prompt !== undefined ? [{ role: "user" as const, content: data.prompt as string }] : readMessages(data.messages, path.dirname(file));
  const texts = messages.flatMap((message) => templateTexts(message.content));
  const declared = readArguments(data.arguments);
  const names = [...new Set([...texts.flatMap((text) => templatePlaceholders(text)), ...declared.keys()])];
  const served = names.map((argument): ServedPromptArgument => declared.get(argument) ?? { name: argument, required: true, completions: [] });
  return {
    name,
    ...(typeof data.title === "string" ? { title: data.title } : {}),
    description: typeof data.description === "string" ? data.description : summaryLine(texts[0] ?? "") || `Prompt ${name}`,
    arguments: served,
    render: (given) => {
      const args: Record<string, string> = {};
      for (const argument of served) {
        const value = Object.hasOwn(given, argument.name) ? given[argument.name] : argument.default;
        if (value !== undefined) args[argument.name] = value;
      }
      return messages.map((message) => ({ role: message.role, content: fillContent(message.content, args, name) }));
    },
  };
}

type RawContent = string | ContentBlock;

function readMessages(value: unknown, dir: string): Array<{ role: "user" | "assistant"; content: RawContent }> {
  if (!Array.isArray(value) || value.length === 0) throw new Error("`messages` must be a non-empty list of {role, content}");
  return value.map((message, index) => {
    const where = `messages[${index}]`;
    if (!isPlainObject(message)) throw new Error(`${where} must be {role, content}, got ${kindOf(message)}`);
    if (message.role !== "user" && message.role !== "assistant") throw new Error(`${where}.role must be "user" or "assistant", got ${JSON.stringify(message.role)}`);
    const content = message.content;
    if (typeof content === "string") return { role: message.role, content };
    if (isPlainObject(content) && (content.type === "image" || content.type === "audio") && typeof content.file === "string" && content.data === undefined) {
      // A picture kept beside the prompt: read once, here, so that a missing file is reported when serving starts.
      const file = path.resolve(dir, content.file);
      const { file: _file, ...rest } = content;
      return { role: message.role, content: toContentBlock({ ...rest, data: readFileSync(file), mimeType: typeof content.mimeType === "string" ? content.mimeType : mimeTypeOf(file) }, `${where}.content`) };
    }
    return { role: message.role, content: toContentBlock(content, `${where}.content`) };
  });
}

function readArguments(value: unknown): Map<string, ServedPromptArgument> {
  const out = new Map<string, ServedPromptArgument>();
  if (value === undefined) return out;
  if (!isPlainObject(value)) throw new Error(`\`arguments\` must map argument names to {description, required, default, completions}, got ${kindOf(value)}`);
  for (const [name, spec] of Object.entries(value)) {
    const where = `arguments.${name}`;
    const fields = spec === null ? {} : spec;
    if (!isPlainObject(fields)) throw new Error(`${where} must be a mapping, got ${kindOf(fields)}`);
    if (fields.description !== undefined && typeof fields.description !== "string") throw new Error(`${where}.description must be a string`);
    if (fields.required !== undefined && typeof fields.required !== "boolean") throw new Error(`${where}.required must be true or false`);
    if (fields.default !== undefined && typeof fields.default !== "string") throw new Error(`${where}.default must be a string (MCP arguments are strings)`);
    if (fields.completions !== undefined && !(Array.isArray(fields.completions) && fields.completions.every((item) => typeof item === "string"))) throw new Error(`${where}.completions must be a list of strings`);
    out.set(name, {
      name,
      ...(typeof fields.description === "string" ? { description: fields.description } : {}),
      required: fields.required ?? fields.default === undefined,
      ...(typeof fields.default === "string" ? { default: fields.default } : {}),
      completions: (fields.completions as string[] | undefined) ?? [],
    });
  }
  return out;
}

/** The texts of a content that are templates: the text, a resource's URI and text. */
function templateTexts(content: RawContent): string[] {
  if (typeof content === "string") return [content];
  if (content.type === "text") return [content.text];
  if (content.type === "resource") return [content.resource.uri, ..."text" in content.resource ? [content.resource.text] : []];
  if (content.type === "resource_link") return [content.uri];
  return [];
}

function fillContent(content: RawContent, args: Record<string, string>, name: string): PromptMessage["content"] {
  if (typeof content === "string") return { type: "text", text: fill(content, args, name) };
  if (content.type === "text") return { type: "text", text: fill(content.text, args, name) };
  if (content.type === "resource") {
    const resource = content.resource;
    return { type: "resource", resource: { ...resource, uri: fill(resource.uri, args, name), ..."text" in resource ? { text: fill(resource.text, args, name) } : {} } };
  }
  if (content.type === "resource_link") return { ...content, uri: fill(content.uri, args, name) };
  return content;
}

function fill(template: string, args: Record<string, string>, name: string): string {
  return formatTemplate(template, args, { path: name });
}
