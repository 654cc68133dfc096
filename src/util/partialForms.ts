/**
 * Where, at the end of a text that more is still to follow, a form of a secret may have begun that is not whole yet:
 * a stream (`StreamRedactor`) passes on what comes before that place and holds the rest back until it knows more. A
 * place is held when what follows it to the end could begin a form; that is over-approximated (a `&` at the end is
 * held, for it may begin `&#115;`), never under: a form cut in two would pass both halves unredacted.
 *
 * The forms looked at here are each character of a secret raw or escaped (`textForm` in `redact.ts`) and the quoted
 * forms (JSON, Python, HTML strings); the hex and base64 forms are `SecretRedactor.partialFormStart`'s, which also
 * finds them wrapped. A pattern of every prefix of a form would say the same, but V8 takes about 30 ms to compile one
 * for a 164-character key, on the first piece of every streamed answer; this walk costs nothing beforehand and, as
 * most places of a text cannot begin a form (`firsts`), little per piece.
 */

/** The ways one character of a secret is written, as texts (see `textForm` in `redact.ts`, which must agree). */
export interface CharForms {
  /** Compared as they are: the character, its form-encoding swap (`+` for a space and back), HTML name, `\/`. */
  exact: string[];
  /** Compared with the text in lower case: percent escapes (each byte once or twice encoded), `\uXXXX`. */
  caseless: string[];
  /** The longest of `caseless`. */
  longest: number;
  /** The digits of its numeric HTML references (`&#115;`, `&#x73;`, any zeros before them), hex in lower case. */
  decimal: string;
  hex: string;
}

/** A secret's forms for `partialStart`: each character's, and whole texts (its quoted forms). */
export interface SecretForms {
  chars: CharForms[];
  literals: string[];
}

/** The forms of secrets, and every character one of them can begin with. */
export interface PartialForms {
  secrets: SecretForms[];
  firsts: Set<string>;
}

export function partialFormsOf(secrets: SecretForms[]): PartialForms {
  // A reference begins with `&`, a percent escape with `%`, `\uXXXX` and `\/` with `\`.
  const firsts = new Set<string>(["&", "%", "\\"]);
  for (const secret of secrets) {
    for (const form of secret.chars[0]?.exact ?? []) firsts.add(form[0]!);
    for (const literal of secret.literals) firsts.add(literal[0]!);
  }
  return { secrets, firsts };
}

/**
 * The first place at or after `from` from which the rest of the text begins a form of one of the secrets (or is one
 * whole: a longer secret may hold it); the text's length when there is none.
 */
export function partialStart(text: string, from: number, forms: PartialForms): number {
  for (let start = Math.max(0, from); start < text.length; start += 1) {
    if (!forms.firsts.has(text[start]!)) continue;
    for (const secret of forms.secrets) if (beginsForm(text, start, secret)) return start;
  }
  return text.length;
}

/** Whether the text from `start` to its end is the beginning of a form of the secret, or one whole. */
function beginsForm(text: string, start: number, secret: SecretForms): boolean {
  const rest = text.length - start;
  for (const literal of secret.literals) if (rest <= literal.length && text.startsWith(literal.slice(0, rest), start)) return true;
  // The places the form may have reached after each character: an escape may be read more than one way (`%2525` is
  // `%25` twice encoded, or `%25` and then the characters `25`), so there may be several.
  let places = [start];
  for (const char of secret.chars) {
    const next: number[] = [];
    for (const at of places) {
      if (at === text.length || charEnds(text, at, char, next)) return true;
    }
    if (next.length === 0) return false;
    places = next.length === 1 ? next : [...new Set(next)];
  }
  return places.includes(text.length);
}

/**
 * Adds to `ends` where each form of the character that begins at `at` ends; whether the text ends inside one (the
 * rest of the text begins a form of it).
 */
function charEnds(text: string, at: number, char: CharForms, ends: number[]): boolean {
  const rest = text.length - at;
  let partial = false;
  for (const form of char.exact) {
    if (text.startsWith(form, at)) ends.push(at + form.length);
    else if (rest < form.length && form.startsWith(text.slice(at))) partial = true;
  }
  if (char.caseless.length > 0) {
    const lower = text.slice(at, at + char.longest).toLowerCase();
    for (const form of char.caseless) {
      if (lower.startsWith(form)) ends.push(at + form.length);
      else if (rest < form.length && form.startsWith(lower)) partial = true;
    }
  }
  if (text.charCodeAt(at) === 38) partial = referenceEnds(text, at, char, ends) || partial;
  return partial;
}

/** `charEnds` for the numeric references `&#0*N;` and `&#[xX]0*H;`, with `at` on their `&`. */
function referenceEnds(text: string, at: number, char: CharForms, ends: number[]): boolean {
  let index = at + 1;
  if (index === text.length) return true;
  if (text[index] !== "#") return false;
  index += 1;
  if (index === text.length) return true;
  const hexadecimal = text[index] === "x" || text[index] === "X";
  if (hexadecimal) index += 1;
  for (let zeros = 0; text.charCodeAt(index) === 48; zeros += 1) {
    if (zeros === 9) return false; // `textForm` allows 8 (9 for a NUL)
    index += 1;
  }
  if (index === text.length) return true;
  const digits = `${hexadecimal ? char.hex : char.decimal};`;
  const found = text.slice(index, index + digits.length);
  const compared = hexadecimal ? found.toLowerCase() : found;
  if (compared === digits) {
    ends.push(index + digits.length);
    return false;
  }
  return index + found.length === text.length && digits.startsWith(compared);
}

/**
 * Where a URL whose userinfo `maskUrlCredentials` would mask may have begun and not ended yet: a scheme (any word of
 * up to 32 letters, digits, `+`, `.`, `-` could be one), `:`, two slashes (JSON may escape them), the userinfo so far.
 * A stream so holds back the last word of a text until what follows it shows it is no such URL.
 */
const URL_START = /\b[a-z][a-z0-9+.-]{0,31}(?::(?:\\{0,7}(?:\/(?:\\{0,7}(?:\/[^\s/?#"'<>()[\]{}`\\]{0,2048})?)?)?)?)?$/gi;

/** The longest beginning of a URL `URL_START` holds (scheme, `:`, two escaped slashes, userinfo): USERINFO's bound. */
export const URL_WINDOW = 32 + 1 + 2 * 8 + 2048;

/** The first place at or after `from` where `URL_START` begins; the text's length when there is none. */
export function urlStart(text: string, from: number): number {
  URL_START.lastIndex = Math.max(0, from);
  return URL_START.exec(text)?.index ?? text.length;
}
