/**
 * The one redaction mechanism for every text that leaves lllm (answers, errors, logs, caches): each registered
 * secret is replaced by `[redacted]` in every encoding a server, a URL or a log is likely to give it back in.
 *
 * A key such as `ab+c/d=9` travels percent-encoded in a query string (`ab%2Bc%2Fd%3D9`), comes back with lower-case
 * escapes, form-encoded, JSON-escaped (`ab+c\/d=9`), double-encoded, or base64-encoded inside a Basic
 * `Authorization` header: matching the raw text alone leaks it. Each character of a secret may therefore appear
 * raw or in any of its escaped forms (mixed freely, hex digits in either case), and base64 forms are matched at each
 * of the three byte alignments, so a key inside a longer base64 text (`user:key`) is found too. The hex and base64
 * forms are also found wrapped or spaced out: with white space (spaces, tabs, line breaks, also JSON's `\n`, `\r`,
 * `\t` escapes) anywhere between their characters, as `base64` (76 columns), `xxd -p` (60), `od -t x1` or a PEM
 * body print them (see `redactWrapped`).
 */

import { type CharForms, type PartialForms, partialFormsOf, partialStart, type SecretForms, URL_WINDOW, urlStart } from "./partialForms.js";
import { maskUrlCredentials, urlCredentials, urlCredentialsIn } from "./urlCredentials.js";

export const REDACTED = "[redacted]";

/** Shorter values would match ordinary text (a key of `test` would blank every "test"); real keys are long. */
export const MIN_SECRET_LENGTH = 8;

/**
 * A set of secrets and one compiled pattern that finds any of them in any encoding. Every text it redacts also loses
 * the userinfo of the URLs in it (`http://[redacted]@host`), secret or not: a password in a base URL is masked even
 * when it is too short to be a secret here. A redactor made with a `parent` removes the parent's secrets as well, as
 * they are when it redacts (the process-wide set grows while lllm runs).
 */
export class SecretRedactor {
  private readonly secrets = new Set<string>();
  /**
   * This redactor's secrets and its parents', matched in one pass (a run's record redactor and the process-wide one
   * used to scan each text once each), as they were when `parentSize` was read: secrets are never taken back, so a
   * parent of another size has new ones.
   */
  private all: string[] | undefined;
  private parentSize = 0;
  /** Every form of `all` (see `compile`); compiled on the first text that holds an escape. */
  private pattern: RegExp | undefined;
  /** The forms without escapes, for a text that holds none: most texts, and V8 compiles it in a tenth of the time. */
  private plainPattern: RegExp | undefined;
  /** The hex and base64 forms, found with white space between their characters (`redactWrapped`). */
  private wrapped: WrappedForms | undefined;
  /** Every form but the hex and base64 ones, as texts, for `heldFrom`; made on a stream's first piece. */
  private partial: PartialForms | undefined;
  /** The most line feeds one of this redactor's own secrets holds. */
  private ownLineBreaks = 0;

  constructor(private readonly parent?: SecretRedactor) {}

  /** Remember a secret; values shorter than `MIN_SECRET_LENGTH` (or undefined) are ignored. */
  add(secret: string | undefined): void {
    // One the parent holds is removed by it already (a parent's secrets are never taken back): matching it here again
    // would scan every text twice for it, and compile a second pattern.
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH || this.has(secret)) return;
    this.secrets.add(secret);
    this.all = undefined;
    this.ownLineBreaks = Math.max(this.ownLineBreaks, secret.split("\n").length - 1);
  }

  /** The most line feeds a secret here holds (a PEM private key: one a line); most secrets hold none. */
  get lineBreaks(): number {
    return Math.max(this.ownLineBreaks, this.parent?.lineBreaks ?? 0);
  }

  /** Whether this redactor or a parent of it removes the secret. */
  has(secret: string): boolean {
    return this.secrets.has(secret) || (this.parent?.has(secret) ?? false);
  }

  get size(): number {
    return this.secrets.size + (this.parent?.size ?? 0);
  }

  /** An upper bound of the length of any form a secret can take here (`%25XX` for each of up to 4 bytes a char). */
  longestEncodedForm(): number {
    let longest = this.parent?.longestEncodedForm() ?? 0;
    for (const secret of this.secrets) longest = Math.max(longest, secret.length * 20);
    return longest;
  }

  /** The text with every known secret, in every encoding, and the userinfo of every URL replaced by `[redacted]`. */
  redact(text: string): string {
    return this.redactKnown(maskUrlCredentials(text, REDACTED));
  }

  /**
   * The text with every known secret replaced, URLs left as they are: for what a tool returns to the model, where
   * `ssh://git@github.com/…` must stay usable (a password in a URL lllm was given is a known secret).
   */
  redactKnown(text: string): string {
    const all = this.allSecrets();
    if (all.length === 0 || text.length < MIN_SECRET_LENGTH) return text;
    // Every escaped form of a character begins with one of ESCAPES: a text without them can hold a secret only in
    // the forms without escapes, which the plain pattern has. (The full pattern, for an eight-character key, takes V8
    // about 2 ms to compile on its first use; a recorded run pays it only when a text has an escape.)
    const pattern = ESCAPES.test(text) ? (this.pattern ??= patternOf(all, true)) : (this.plainPattern ??= patternOf(all, false));
    pattern.lastIndex = 0;
    return redactWrapped(text.replace(pattern, REDACTED), (this.wrapped ??= wrappedFormsOf(all)));
  }

  /**
   * Where, in a text that more is still to follow, a hex or base64 form of a secret may have begun that is not whole
   * yet (it may be wrapped onto the next lines): the text's length when none may have. A stream holds back from
   * there. Only the last `longestEncodedForm()` characters are looked at: no form a secret takes is longer.
   */
  partialFormStart(text: string): number {
    const all = this.allSecrets();
    if (all.length === 0) return text.length;
    const { forms } = (this.wrapped ??= wrappedFormsOf(all));
    // The tail without its white space, and where each of its characters is in the text.
    const kept: string[] = [];
    const at: number[] = [];
    for (let index = gapEnd(text, Math.max(0, text.length - this.longestEncodedForm())); index < text.length; index = gapEnd(text, index + 1)) {
      kept.push(text[index]!);
      at.push(index);
    }
    const compact = kept.join("");
    const lower = compact.toLowerCase();
    let start = compact.length;
    for (const form of forms) {
      const tail = form.caseless ? lower : compact;
      // The longest end of the tail that begins the form (a whole form was redacted already).
      for (let index = Math.max(0, tail.length - form.text.length + 1); index < start; index += 1) {
        index = tail.indexOf(form.text[0]!, index);
        if (index < 0 || index >= start) break;
        if (form.text.startsWith(tail.slice(index))) {
          start = index;
          break;
        }
      }
    }
    return start === compact.length ? text.length : at[start]!;
  }

  /**
   * Where, in a text that more is still to follow, a form of a secret may have begun that is not whole yet, or a URL
   * whose userinfo `redact` masks (the text's length when neither may have): a stream passes on what comes before,
   * and holds the rest back. Only the last `longestEncodedForm()` characters are looked at (`URL_WINDOW` for a URL).
   */
  heldFrom(text: string): number {
    const all = this.allSecrets();
    const from = Math.max(0, text.length - this.longestEncodedForm());
    // A URL's userinfo may be longer than any key's form, and is masked with no key registered too.
    const url = urlStart(text, Math.max(0, text.length - URL_WINDOW));
    if (all.length === 0) return url;
    const partial = (this.partial ??= partialFormsOf(all.map(secretForms)));
    return Math.min(url, partialStart(text, from, partial), this.partialFormStart(text));
  }

  /** Every secret this redactor removes, its parents' included (gathered again when a parent learnt one). */
  private allSecrets(): string[] {
    const parentSize = this.parent?.size ?? 0;
    if (this.all === undefined || parentSize !== this.parentSize) {
      this.all = [...(this.parent?.allSecrets() ?? []), ...this.secrets];
      this.parentSize = parentSize;
      this.pattern = undefined;
      this.plainPattern = undefined;
      this.wrapped = undefined;
      this.partial = undefined;
    }
    return this.all;
  }

  /**
   * A JSON-like value with every string (object keys included) redacted: a copy of the arrays and plain objects in
   * which something changed, and the value itself (not a copy) when nothing did, e.g. when no secret is registered
   * and no string holds a URL with credentials: most answers, walked without allocating anything.
   */
  redactValue<T>(value: T): T {
    return walk(value, (text) => this.redact(text)) as T;
  }

  /** `redactValue` with `redactKnown`: URLs left as they are. */
  redactKnownValue<T>(value: T): T {
    return walk(value, (text) => this.redactKnown(text)) as T;
  }

  /**
   * Redact an error in place: its message, stack, hint and `cause` chain (which `--verbose` prints), so that the
   * same object can be thrown on. Returns it for convenience.
   */
  redactError<T>(error: T): T {
    const seen = new Set<unknown>();
    let current: unknown = error;
    while (current instanceof Error && !seen.has(current)) {
      seen.add(current);
      const writable = current as Error & { hint?: unknown };
      try {
        writable.message = this.redact(writable.message);
        if (writable.stack) writable.stack = this.redact(writable.stack);
        if (typeof writable.hint === "string") Object.defineProperty(writable, "hint", { value: this.redact(writable.hint), configurable: true, enumerable: true });
      } catch {
        // A frozen error from a library: nothing to write, and the CLI output is redacted as well.
      }
      current = current.cause;
    }
    return error;
  }
}

/** The process-wide redactor: providers and proxies register the keys they use, the CLI redacts what it prints. */
export const secrets = new SecretRedactor();

/** Register a key with the process-wide redactor. */
export function registerSecret(secret: string | undefined): void {
  secrets.add(secret);
}

/**
 * Variable names whose values are credentials by convention: `OPENAI_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`,
 * `AWS_SECRET_ACCESS_KEY`, `BASIC_AUTH`… A whole `_`-separated word must match, so `KEYBOARD` or `SESSION` do not
 * (XDG_SESSION_DESKTOP=ubuntu would blank out every "ubuntu").
 */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH|COOKIE)(?:_|$)/i;

/** Whether an environment variable's name says its value is a credential. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Variable names whose values are URLs or addresses by convention, which may carry a password (`user:pass@`). */
const URL_NAME = /(?:^|_)(?:URL|URI|URIS|URLS|PROXY|ENDPOINT|HOST|DSN)(?:_|$)/i;

/**
 * The values of the environment's credential-like variables, and the passwords in the URLs of its URL-like ones
 * (`OPENAI_BASE_URL=http://user:pass@host/v1`, `HTTPS_PROXY`, `DATABASE_URL`).
 */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  // By name first: reading a value of `process.env` is slow, and most variables are not credentials.
  const values: string[] = [];
  for (const name of Object.keys(env)) {
    const secret = isSecretName(name);
    if (!secret && !URL_NAME.test(name)) continue;
    const value = env[name];
    if (value === undefined) continue;
    if (secret) values.push(value);
    values.push(...urlCredentials(value));
  }
  return values;
}

/** Register the passwords in the URLs of a parsed config file (a base URL, a proxy's, an MCP server's). */
export function registerUrlCredentials(value: unknown): void {
  for (const secret of urlCredentialsIn(value)) secrets.add(secret);
}

/**
 * Register the values of the environment's credential-like variables, so that a key a tool or a server echoes is
 * removed even when lllm itself never used it.
 */
export function registerEnvironmentSecrets(env: NodeJS.ProcessEnv): void {
  for (const value of environmentSecrets(env)) secrets.add(value);
}

/**
 * A redactor of its own for these secrets (e.g. the run store's, which knows the keys a tactic's proxies use), that
 * removes the process-wide ones too.
 */
export function redactorOf(values: Iterable<string | undefined>): SecretRedactor {
  const redactor = new SecretRedactor(secrets);
  for (const value of values) redactor.add(value);
  return redactor;
}

/** Redact text with the process-wide redactor. */
export function redactSecrets(text: string): string {
  return secrets.redact(text);
}

/** `value` redacted, copied only from the first thing that changes: what is unchanged is returned as it is. */
function walk(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const redacted = walk(item, redact);
      if (!Object.is(redacted, item)) return [...value.slice(0, index), redacted, ...value.slice(index + 1).map((rest: unknown) => walk(rest, redact))];
    }
    return value;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    const redactedKey = redact(key);
    const redacted = walk(record[key], redact);
    if (redactedKey !== key || !Object.is(redacted, record[key])) {
      // Entries, not assignment: a key such as `__proto__` must stay an own property of the copy.
      const entries: Array<[string, unknown]> = keys.slice(0, index).map((before) => [before, record[before]]);
      entries.push([redactedKey, redacted]);
      for (const after of keys.slice(index + 1)) entries.push([redact(after), walk(record[after], redact)]);
      return Object.fromEntries(entries);
    }
  }
  return value;
}

/** What each escaped form in `textForm` begins with: `%XX`, JSON's `\uXXXX` and `\/`, HTML's `&#…;` and its names. */
const ESCAPES = /%|\\[u/]|&(?:#|amp;|lt;|gt;|quot;|apos;)/;

/**
 * The patterns compiled lately, by their secrets and kind: redactors that know the same secrets share one (a run's
 * record redactor and the process-wide one, each run of a batch or a server), and V8 compiles it once. A few only:
 * each holds its secrets.
 */
const compiled = new Map<string, RegExp>();
const COMPILED_KEPT = 8;

function patternOf(secrets: readonly string[], escapes: boolean): RegExp {
  const unique = [...new Set(secrets)].sort();
  const key = JSON.stringify([escapes, ...unique]);
  let pattern = compiled.get(key);
  if (pattern === undefined) {
    pattern = compile(unique, escapes);
    if (compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, pattern);
  }
  return pattern;
}

/** The pattern of every form of the secrets; with `escapes` false, of the forms that hold none of `ESCAPES`. */
function compile(list: string[], escapes: boolean): RegExp {
  // Longest first: a secret that contains another is removed whole.
  const alternatives = list.sort((a, b) => b.length - a.length).flatMap((secret) => [...base64Forms(secret), hexForm(secret), ...quotedForms(secret), textForm(secret, escapes)]);
  return new RegExp(alternatives.join("|"), "g");
}

/** A hex or base64 form of a secret as a text: hex in lower case, matched in either. */
interface WrappedForm {
  text: string;
  caseless: boolean;
}

/**
 * The hex and base64 forms of some secrets, longest first, and by the two characters each begins with (`byStart`,
 * indexed by their codes as `first * 128 + second`; hex in both cases); `starts` finds where two such characters
 * follow each other, a gap (see `gapEnd`) between them allowed, which `redactWrapped` looks for.
 */
interface WrappedForms {
  forms: WrappedForm[];
  byStart: Map<number, WrappedForm[]>;
  starts: RegExp;
}

/** A gap (see `gapEnd`) as a pattern: white space, or a run of backslashes before `n`, `r`, `t`, a `/` or the end. */
const GAP = String.raw`(?:[ \t-\r]|\\+[nrt]|\\+(?=\/|$))`;

/** The letters that make an escape after a backslash a gap (`\n`, `\r`, `\t`). */
const ESCAPE_LETTER = /[nrt]/;

function wrappedFormsOf(secrets: readonly string[]): WrappedForms {
  const forms = [...new Set(secrets)]
    .flatMap((secret): WrappedForm[] => [...base64Texts(secret).map((text) => ({ text, caseless: false })), { text: Buffer.from(secret, "utf8").toString("hex"), caseless: true }])
    .sort((a, b) => b.text.length - a.text.length);
  const byStart = new Map<number, WrappedForm[]>();
  // The characters that may follow each first character of a form.
  const seconds = new Map<string, Set<string>>();
  for (const form of forms) {
    const cases = (char: string): string[] => (form.caseless ? [...new Set([char, char.toUpperCase()])] : [char]);
    for (const first of cases(form.text[0]!)) {
      for (const second of cases(form.text[1]!)) {
        const start = first.charCodeAt(0) * 128 + second.charCodeAt(0);
        byStart.set(start, [...(byStart.get(start) ?? []), form]);
        seconds.set(first, (seconds.get(first) ?? new Set()).add(second));
      }
    }
  }
  // Each first character, where one of its second ones follows (a lookahead: a match takes one character, so two
  // starts that overlap are both found). Hex and base64 characters are ASCII; each is written as `\xNN`. The letter of
  // an escape (`\n`) is part of a gap, not a character of a form: a lookbehind refuses it before the lookahead reads
  // on (each letter of a run of `\n` would otherwise read the rest of the run: quadratic).
  const code = (char: string): string => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`;
  const alternatives = [...seconds].map(([first, after]) => `${ESCAPE_LETTER.test(first) ? String.raw`(?<!\\)` : ""}${code(first)}(?=${GAP}*[${[...after].map(code).join("")}])`);
  return { forms, byStart, starts: new RegExp(alternatives.join("|"), "g") };
}

/**
 * Where the gap at `index` ends (`index` itself when there is none there): what may stand between two characters of
 * a wrapped or spaced-out hex or base64 form. That is white space (space, tab, line feed, carriage return, form feed,
 * vertical tab), the escapes a JSON text (or one inside another) writes a line break or a tab as (`\n`, `\\r`… the
 * run log's records are JSON texts), and the backslashes of a JSON `\/` (a `/` of base64) or at the very end of a
 * text (where more may follow).
 */
function gapEnd(text: string, index: number): number {
  let at = index;
  for (;;) {
    const code = text.charCodeAt(at);
    if (code === 32 || (code >= 9 && code <= 13)) {
      at += 1;
      continue;
    }
    if (code !== 92) return at;
    let after = at + 1;
    while (text.charCodeAt(after) === 92) after += 1;
    const next = text.charCodeAt(after);
    if (next === 110 || next === 114 || next === 116) at = after + 1;
    else if (next === 47 || after >= text.length) return after;
    else return at;
  }
}

/**
 * The text with every hex and base64 form of the secrets that has white space (see `gapEnd`) between its characters
 * replaced too, from its first character to its last: a key that `base64` (76 columns), `xxd -p` (60), `od -t x1`, a
 * PEM body or a JSON text of them wraps or spaces out is as decodable as one that is not.
 *
 * A regular expression with optional white space after each character is several times slower than all the other
 * forms together (V8 can no longer skip ahead on a form's first characters), and so is a copy of the text without
 * its white space (prose has a gap every few characters). So one pattern (`starts`) finds where two characters that
 * begin a form follow each other, gaps allowed between them (a few places in most texts), and only there is a form
 * compared, character by character. A pattern, not a loop over the characters: V8 runs it as machine code from its
 * first use, where a loop runs interpreted for the first texts (the few short texts of each round of a run cost the
 * recording of a 100-round run about 3% of its instructions so). Joining the words of a text cannot make up a form by
 * chance: each is at least eight characters of a key's base64, or sixteen of its hex.
 */
function redactWrapped(text: string, wrapped: WrappedForms): string {
  const { starts, byStart } = wrapped;
  let candidates: number[] | undefined;
  starts.lastIndex = 0;
  for (let match = starts.exec(text); match !== null; match = starts.exec(text)) (candidates ??= []).push(match.index);
  if (candidates === undefined) return text;
  const out: string[] = [];
  let done = 0;
  for (const candidate of candidates) {
    if (candidate < done) continue;
    const start = text.charCodeAt(candidate) * 128 + text.charCodeAt(gapEnd(text, candidate + 1));
    for (const form of byStart.get(start) ?? []) {
      const end = wrappedFormEnd(text, candidate, form);
      if (end < 0) continue;
      out.push(text.slice(done, candidate), REDACTED);
      done = end;
      break;
    }
  }
  if (done === 0) return text;
  out.push(text.slice(done));
  return out.join("");
}

/** Where the form ends when it begins at `index`, gaps between its characters allowed; -1 when it does not. */
function wrappedFormEnd(text: string, index: number, form: WrappedForm): number {
  let at = index;
  for (let matched = 0; matched < form.text.length; matched += 1) {
    if (matched > 0) at = gapEnd(text, at);
    let code = text.charCodeAt(at);
    if (form.caseless && code >= 65 && code <= 70) code += 32;
    if (code !== form.text.charCodeAt(matched)) return -1;
    at += 1;
  }
  return at;
}

/** Each character raw or escaped: %XX (either case, also double-encoded %25XX), JSON \uXXXX, HTML &#…;, and the
 * form-encoding `+` for a space (and a space for `+`, which a server may decode a raw `+` to). Without `escapes`:
 * raw, and the space and `+` for each other. */
function textForm(secret: string, escapes: boolean): string {
  return [...secret]
    .map((char) => {
      const forms = [escapeRegExp(char)];
      const code = char.codePointAt(0)!;
      if (escapes) {
        const bytes = [...Buffer.from(char, "utf8")];
        forms.push(bytes.map((byte) => `%(?:25)?${hexPattern(byte, 2)}`).join(""));
        if (code <= 0xffff) forms.push(`\\\\u${hexPattern(code, 4)}`);
        // At most 8 zeros: unbounded, a form would be longer than `longestEncodedForm()`, which a stream holds back.
        forms.push(`&#0{0,8}${code};`, `&#[xX]0{0,8}${hexPattern(code, 0)};`);
        if (char === "/") forms.push("\\\\/");
      }
      // HTML's names, here too: a text may name one character and number another (`&quot;`, `&#39;`).
      const named = escapes ? (char === "'" ? "&apos;" : HTML_ESCAPES[char]) : undefined;
      if (named !== undefined) forms.push(named);
      if (char === " ") forms.push("\\+");
      if (char === "+") forms.push(" ");
      return forms.length === 1 ? forms[0]! : `(?:${forms.join("|")})`;
    })
    .join("");
}

/** A secret's forms for `heldFrom`: `textForm`'s and `quotedForms`' as texts. */
function secretForms(secret: string): SecretForms {
  return { chars: [...secret].map(charForms), literals: quotedTexts(secret) };
}

/** The forms `textForm` gives a character (with escapes), as texts: escapes in lower case, references' digits apart. */
function charForms(char: string): CharForms {
  const code = char.codePointAt(0)!;
  const exact = [char];
  if (char === " ") exact.push("+");
  if (char === "+") exact.push(" ");
  if (char === "/") exact.push("\\/");
  const named = char === "'" ? "&apos;" : HTML_ESCAPES[char];
  if (named !== undefined) exact.push(named);
  // Each byte once or twice encoded, mixed as `textForm` allows: at most 16 texts, for a character of four bytes.
  let caseless = [""];
  for (const byte of Buffer.from(char, "utf8")) {
    const hex = byte.toString(16).padStart(2, "0");
    caseless = caseless.flatMap((before) => [`${before}%${hex}`, `${before}%25${hex}`]);
  }
  if (code <= 0xffff) caseless.push(`\\u${code.toString(16).padStart(4, "0")}`);
  // A reference's zeros are skipped before its digits are compared; a NUL's digits are all zeros.
  return { exact, caseless, longest: Math.max(...caseless.map((form) => form.length)), decimal: code === 0 ? "" : String(code), hex: code === 0 ? "" : code.toString(16) };
}

/**
 * The secret as a string inside JSON (also JSON inside JSON, up to three deep: a tool's arguments or result holding a
 * JSON text, in a record that is JSON), inside Python's repr, and in HTML: `"` becomes `\"`, `\\"`…, a newline `\n`,
 * `&` `&amp;`. An encoder escapes every such character of a string alike, so each form is one literal text: a few
 * more alternatives, where escaping each character in every way would make a long key's pattern (a PEM private key)
 * far slower to compile and to match. Those forms hold no `ESCAPES`, so both patterns have them. Escapes by code
 * (`\u0022`, `&#34;`) are `textForm`'s.
 */
function quotedForms(secret: string): string[] {
  return quotedTexts(secret).map(escapeRegExp);
}

/** `quotedForms` as texts, longest first. */
function quotedTexts(secret: string): string[] {
  if (!QUOTED.test(secret)) return [];
  const forms = new Set<string>();
  let json = secret;
  for (let depth = 1; depth <= 3; depth += 1) forms.add((json = JSON.stringify(json).slice(1, -1)));
  forms.add(secret.replace(/[\\'\n\r\t]/g, (char) => PYTHON_ESCAPES[char]!));
  // `'` as encoders write it: &#39; (lodash, React), &#x27; (Python's html.escape), &apos; (XML).
  for (const apostrophe of ["&#39;", "&#x27;", "&apos;"]) forms.add(secret.replace(/[&<>"']/g, (char) => (char === "'" ? apostrophe : HTML_ESCAPES[char]!)));
  forms.delete(secret);
  return [...forms].sort((a, b) => b.length - a.length);
}

/** The characters JSON, Python's repr or HTML write otherwise. */
const QUOTED = /["'\\&<>\u0000-\u001f]/;

const PYTHON_ESCAPES: Readonly<Record<string, string>> = { "\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function hexForm(secret: string): string {
  return [...Buffer.from(secret, "utf8")].map((byte) => hexPattern(byte, 2)).join("");
}

/** The base64 characters that depend only on the secret's bytes, at each alignment, in both alphabets; and the
 * whole encoding with its padding first, so a lone encoded key is removed entirely. */
function base64Forms(secret: string): string[] {
  return base64Texts(secret).map(escapeRegExp);
}

function base64Texts(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms = new Set<string>();
  forms.add(bytes.toString("base64"));
  forms.add(bytes.toString("base64url"));
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6);
    const stable = encoded.slice(first, last);
    if (stable.length < MIN_SECRET_LENGTH) continue;
    forms.add(stable);
    forms.add(stable.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A hex number as a pattern accepting both cases, zero-padded to `width` digits (0: no padding). */
function hexPattern(value: number, width: number): string {
  return value
    .toString(16)
    .padStart(width, "0")
    .split("")
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join("");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
