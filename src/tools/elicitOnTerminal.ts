import { createInterface, type Interface } from "node:readline";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { discardTypedAhead, inTurn } from "../util/terminalTurn.js";
import { isPlainObject, type JsonSchema } from "./JsonSchema.js";
import type { ElicitRequest, ElicitResult } from "./ToolContext.js";

type Value = string | number | boolean | string[];
type Streams = { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; signal?: AbortSignal };

/** Resets colours and attributes (a concealing `ESC[8m` a tool wrote before the question). */
const RESET = "\u001b[0m";

/**
 * Ask the user for an elicitation's fields, one line each, on `output` (stderr) reading `input`: choices are
 * numbered, a default is shown in brackets and taken on an empty line, a wrong answer is asked again (three times
 * at most, then the form is cancelled). The end of input (Ctrl-D) cancels; `!decline` declines. The request's text
 * (message, titles, descriptions, choices, defaults) may be an MCP server's: its control characters are shown as
 * escapes, so that no escape sequence of theirs drives the terminal or forges a line. The question waits its turn
 * in the process's one queue of terminal questions (`inTurn`: approvals are there too), so no line answers two.
 */
export function elicitOnTerminal(request: ElicitRequest, streams: Streams): Promise<ElicitResult> {
  return inTurn(() => elicitInTurn(request, streams));
}

/**
 * The same question, for a caller that already has the turn (it took it with `inTurn` before loading this module):
 * what was typed before the question is shown is dropped first (`discardTypedAhead`).
 */
export async function elicitInTurn(request: ElicitRequest, streams: Streams): Promise<ElicitResult> {
  if (streams.signal?.aborted) return { action: "cancel" };
  await discardTypedAhead(streams.input);
  return ask(request, streams);
}

async function ask(request: ElicitRequest, streams: Streams): Promise<ElicitResult> {
  const reader = createInterface({ input: streams.input, terminal: false });
  const lines = lineReader(reader, streams.signal);
  const write = (text: string): void => void streams.output.write(text);
  try {
    // On a terminal, whatever came before (a tool's own output) cannot leave the question hidden or recoloured.
    const reset = (streams.output as { isTTY?: boolean }).isTTY ? RESET : "";
    write(`${reset}lllm: ${clean(request.message)}\n  (Enter keeps [the default]; !decline declines; Ctrl-D cancels.)\n`);
    const required = new Set(request.requestedSchema.required ?? []);
    const content: Record<string, Value> = {};
    for (const [name, schema] of Object.entries(request.requestedSchema.properties ?? {})) {
      const field = describeField(name, schema);
      let attempts = 0;
      for (;;) {
        write(`  ${field.label}${field.choices}${field.shownDefault}: `);
        const line = await lines.next();
        if (line === undefined) return { action: "cancel" };
        if (line.trim() === "!decline") return { action: "decline" };
        const parsed = line.trim() === "" ? emptyAnswer(schema, required.has(name)) : parseAnswer(line.trim(), schema);
        if (parsed.ok) {
          if (parsed.value !== undefined) content[name] = parsed.value;
          break;
        }
        write(`  ${parsed.problem}\n`);
        attempts += 1;
        if (attempts >= 3) return { action: "cancel" };
      }
    }
    return { action: "accept", content };
  } finally {
    reader.close();
  }
}

/** Lines one at a time, `undefined` at the end of input or when the call is cancelled. */
function lineReader(reader: Interface, signal: AbortSignal | undefined): { next(): Promise<string | undefined> } {
  const buffered: string[] = [];
  const waiting: Array<(line: string | undefined) => void> = [];
  let ended = false;
  const end = (): void => {
    ended = true;
    for (const resolve of waiting.splice(0)) resolve(undefined);
  };
  reader.on("line", (line) => {
    const resolve = waiting.shift();
    if (resolve) resolve(line);
    else buffered.push(line);
  });
  reader.once("close", end);
  signal?.addEventListener("abort", end, { once: true });
  return {
    next: () => {
      if (buffered.length > 0) return Promise.resolve(buffered.shift());
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** Text to show on the terminal: every control character (newlines too) as an escape. */
function clean(text: string): string {
  return escapeControlCharacters(text, { all: true });
}

interface Choice {
  value: string;
  title: string;
}

function describeField(name: string, schema: JsonSchema): { label: string; choices: string; shownDefault: string } {
  const title = typeof schema.title === "string" ? schema.title : name;
  const description = typeof schema.description === "string" ? ` (${schema.description})` : "";
  const choices = choicesOf(schema);
  const listed = choices.length > 0 ? ` ${choices.map((choice, index) => `${index + 1}) ${choice.title}`).join(", ")}${schema.type === "array" ? " (comma-separated)" : ""}` : schema.type === "boolean" ? " (y/n)" : "";
  const shownDefault = "default" in schema ? ` [${Array.isArray(schema.default) ? schema.default.join(", ") : String(schema.default)}]` : "";
  return { label: clean(`${title}${description}`), choices: clean(listed), shownDefault: clean(shownDefault) };
}

/** The choices of a single- or multiple-choice field: `enum` (with legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`. */
function choicesOf(schema: JsonSchema): Choice[] {
  const source = schema.type === "array" && isPlainObject(schema.items) ? schema.items : schema;
  if (Array.isArray(source.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return source.enum.map((value, index) => ({ value: String(value), title: typeof names[index] === "string" ? names[index] : String(value) }));
  }
  const options = Array.isArray(source.oneOf) ? source.oneOf : Array.isArray(source.anyOf) ? source.anyOf : [];
  return options.filter(isPlainObject).map((option) => ({ value: String(option.const), title: typeof option.title === "string" ? option.title : String(option.const) }));
}

type Parsed = { ok: true; value: Value | undefined } | { ok: false; problem: string };

function emptyAnswer(schema: JsonSchema, required: boolean): Parsed {
  if ("default" in schema) return { ok: true, value: schema.default as Value };
  return required ? { ok: false, problem: "an answer is required" } : { ok: true, value: undefined };
}

function parseAnswer(text: string, schema: JsonSchema): Parsed {
  const choices = choicesOf(schema);
  const pick = (answer: string): string | undefined => {
    const index = /^\d+$/.test(answer) ? Number(answer) - 1 : -1;
    return choices[index]?.value ?? choices.find((choice) => choice.value === answer || choice.title === answer)?.value;
  };
  switch (schema.type) {
    case "boolean":
      if (/^(y|yes|true)$/i.test(text)) return { ok: true, value: true };
      if (/^(n|no|false)$/i.test(text)) return { ok: true, value: false };
      return { ok: false, problem: "answer y or n" };
    case "number":
    case "integer": {
      const value = Number(text);
      if (!Number.isFinite(value) || (schema.type === "integer" && !Number.isInteger(value))) return { ok: false, problem: `answer ${schema.type === "integer" ? "a whole number" : "a number"}` };
      return { ok: true, value };
    }
    case "array": {
      const picked = text.split(",").map((part) => pick(part.trim()));
      if (picked.some((value) => value === undefined)) return { ok: false, problem: `answer numbers or values from the list, separated by commas` };
      return { ok: true, value: picked as string[] };
    }
    default: {
      if (choices.length === 0) return { ok: true, value: text };
      const value = pick(text);
      return value === undefined ? { ok: false, problem: "answer a number or a value from the list" } : { ok: true, value };
    }
  }
}
