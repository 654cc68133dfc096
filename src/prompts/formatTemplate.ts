import { ConfigError } from "../errors.js";

/**
 * One piece of a template: literal text, or a `{name}` placeholder. `{{` and `}}` are literal braces; a brace that
 * does not open a `{identifier}` placeholder is literal too, so a prompt with a JSON example keeps working even
 * when the author forgot to double its braces.
 */
type Piece = { text: string } | { name: string };

const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Templates already split, by their text: a batch fills the same few templates for every item. Bounded (cleared
 * when full) so that templates made from data cannot grow it; long ones are not kept.
 */
const split = new Map<string, readonly Piece[]>();
const SPLIT_KEPT = 256;
const SPLIT_LONGEST = 64 * 1024;

function pieces(template: string): readonly Piece[] {
  const known = split.get(template);
  if (known) return known;
  const result = splitTemplate(template);
  if (template.length <= SPLIT_LONGEST) {
    if (split.size >= SPLIT_KEPT) split.clear();
    split.set(template, result);
  }
  return result;
}

function splitTemplate(template: string): Piece[] {
  const result: Piece[] = [];
  let text = "";
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    text += template.slice(last, match.index);
    last = match.index + match[0].length;
    const name = match[1];
    if (name === undefined) {
      text += match[0][0];
    } else {
      if (text) result.push({ text });
      text = "";
      result.push({ name });
    }
  }
  text += template.slice(last);
  if (text) result.push({ text });
  return result;
}

/** The names of a template's placeholders, each once, in order of first use. */
export function templatePlaceholders(template: string): string[] {
  const names = new Set<string>();
  for (const piece of pieces(template)) if ("name" in piece) names.add(piece.name);
  return [...names];
}

/**
 * Fill a template's `{name}` placeholders from `args`. A string is inserted as it is, anything else as JSON (what
 * a model reads best). A missing argument is a `prompt_missing_argument` ConfigError naming it, the prompt, and
 * the arguments that were given, because a half-filled prompt sent to a model fails silently and expensively.
 */
export function formatTemplate(template: string, args: Record<string, unknown>, options: { path: string }): string {
  let output = "";
  for (const piece of pieces(template)) {
    if ("text" in piece) {
      output += piece.text;
      continue;
    }
    // Own properties only: a placeholder named `constructor` must not pick up Object.prototype.constructor.
    const value = Object.hasOwn(args, piece.name) ? args[piece.name] : undefined;
    if (value === undefined) throw missingArgument(piece.name, args, options.path);
    output += renderValue(value);
  }
  return output;
}

function renderValue(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    // BigInt and circular values have no JSON; some text beats failing the whole prompt.
    return String(value);
  }
}

function missingArgument(name: string, args: Record<string, unknown>, path: string): ConfigError {
  const given = Object.keys(args).filter((key) => args[key] !== undefined);
  const givenText = given.length === 0 ? "no arguments were given" : `the arguments given were: ${given.join(", ")}`;
  return new ConfigError("prompt_missing_argument", `prompt \`${path}\` needs the argument \`${name}\`, but ${givenText}`, {
    hint: `Pass \`${name}\` in the prompt arguments (open(topic, { promptArgs }) for a system prompt, receivePrompt(prompt, args) for a turn), or write {{${name}}} for literal braces.`,
  });
}
