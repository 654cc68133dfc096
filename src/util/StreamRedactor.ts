import { URL_WINDOW } from "./partialForms.js";
import { type SecretRedactor, secrets } from "./redact.js";

/**
 * Redaction of text that arrives in pieces (a streamed answer): a secret split across two pieces must not slip
 * through, and the text must still flow as it arrives. Each piece passes on all that is known to hold no secret: up to
 * where a form of one may have begun that is not whole yet, or a URL whose userinfo is masked (`heldFrom`: in prose,
 * the last word; with no secret registered, a word that may begin a URL). What is held stays as it arrived: redacted,
 * a shorter key's whole form would hide the longer key it begins, and a `[redacted]` would change which URLs match.
 *
 * A secret of several lines (a PEM key) is passed a line at a time instead: a secret of N lines holds the last N
 * lines back, and a hex or base64 form begun before them (`partialFormStart`) with them.
 */
export class StreamRedactor {
  private pending = "";

  constructor(private readonly redactor: SecretRedactor = secrets) {}

  /** The part of the text so far that is safe to show now. */
  push(piece: string): string {
    this.pending += piece;
    const text = this.pending;
    // A key of N lines: the last N + 1 lines are held, and a hex or base64 form begun before them (it may be wrapped).
    const lineBreaks = this.redactor.lineBreaks;
    const lines = lineBreaks === 0 ? text.length : lineCut(text, lineBreaks);
    const cut = lines === 0 ? 0 : lineBreaks === 0 ? this.redactor.heldFrom(text) : Math.min(lines, this.redactor.partialFormStart(text));
    // A piece may end between the two halves of a character (an emoji): the first is held for the second.
    const last = text.charCodeAt(text.length - 1);
    let out = this.releaseBefore(last >= 0xd800 && last <= 0xdbff ? Math.min(cut, text.length - 1) : cut);
    // Held back so long (a whole form spans every cut so far), the text can only hold a form's beginning in its last
    // `hold` characters.
    const hold = Math.max(this.redactor.longestEncodedForm(), URL_WINDOW);
    if (this.pending.length > 2 * hold) out += this.releaseBefore(this.redactor.partialFormStart(this.pending.slice(0, this.pending.length - hold)));
    return out;
  }

  /**
   * The text before `cut`, redacted; what follows stays in `pending` as it arrived (redacted, a shorter key's whole
   * form at its end would hide the longer key it begins, and a `[redacted]` would change which URLs are masked).
   * Nothing when a whole form spans the cut (one secret's end may begin another's, or an escape's digits a key).
   */
  private releaseBefore(cut: number): string {
    const text = this.pending;
    if (cut <= 0) return "";
    if (cut >= text.length) {
      this.pending = "";
      return this.redactor.redact(text);
    }
    const before = this.redactor.redact(text.slice(0, cut));
    if (this.redactor.redact(text) !== before + this.redactor.redact(text.slice(cut))) return "";
    this.pending = text.slice(cut);
    return before;
  }

  /** What is left, at the end of the text. */
  flush(): string {
    const out = this.redactor.redact(this.pending);
    this.pending = "";
    return out;
  }
}

/** Where the last `lineBreaks + 1` lines of the text begin (0 when it has fewer line ends). */
function lineCut(text: string, lineBreaks: number): number {
  let cut = text.length;
  for (let found = 0; found <= lineBreaks && cut >= 0; found += 1) cut = cut === 0 ? -1 : text.lastIndexOf("\n", cut - 1);
  return cut + 1;
}
