import { type SecretRedactor, secrets } from "./redact.js";

/**
 * Redaction of text that arrives in pieces (a streamed answer): a secret split across two pieces must not slip
 * through, and the text must still flow as it arrives. Each piece passes on all that is known to hold no secret: up to
 * where a form of one may have begun that is not whole yet, or a URL whose userinfo is masked (`heldFrom`: in prose,
 * the last word). With no secret registered, pieces pass at once.
 *
 * A secret of several lines (a PEM key) is passed a line at a time instead: a secret of N lines holds the last N
 * lines back, and a hex or base64 form begun in them (`partialFormStart`) with them.
 */
export class StreamRedactor {
  private pending = "";

  constructor(private readonly redactor: SecretRedactor = secrets) {}

  /** The part of the text so far that is safe to show now. */
  push(piece: string): string {
    if (this.redactor.size === 0) return this.flush() + piece;
    this.pending += piece;
    let out = this.redactor.lineBreaks === 0 ? this.releaseKnown() : this.releaseLines(this.redactor.lineBreaks);
    // Held back so long, the text can only hold a form's beginning in its last `longestEncodedForm()` characters (a
    // `%` or `&` at every other place is held as one may begin there).
    const hold = this.redactor.longestEncodedForm();
    if (this.pending.length > 2 * hold) {
      const redacted = this.redactor.redact(this.pending);
      this.pending = redacted.slice(redacted.length - hold);
      out += this.release(redacted.slice(0, redacted.length - hold));
    }
    return out;
  }

  /** What comes before the place where a form of a secret may have begun (see `heldFrom`), redacted. */
  private releaseKnown(): string {
    const text = this.pending;
    const cut = this.redactor.heldFrom(text);
    if (cut === 0) return "";
    if (cut === text.length) {
      this.pending = "";
      return this.redactor.redact(text);
    }
    const before = this.redactor.redact(text.slice(0, cut));
    // A whole form that spans the cut (one secret's end may begin another's, or an escape's digits a key) would be
    // passed on in two unredacted halves: the text is then held whole.
    if (this.redactor.redact(text) !== before + this.redactor.redact(text.slice(cut))) return "";
    this.pending = text.slice(cut);
    return before;
  }

  /**
   * A secret of N lines may span N line ends, and a cut at one would split it: the whole is redacted first (what has
   * arrived whole is removed whole), then passed on up to the (N+1)th last line end, before which no secret that is
   * still arriving can begin.
   */
  private releaseLines(lineBreaks: number): string {
    const redacted = this.redactor.redact(this.pending);
    let cut = redacted.length;
    for (let found = 0; found <= lineBreaks && cut >= 0; found += 1) cut = cut === 0 ? -1 : redacted.lastIndexOf("\n", cut - 1);
    this.pending = redacted.slice(cut + 1);
    return this.release(redacted.slice(0, cut + 1));
  }

  /** The redacted text but its end from where a form of a secret may have begun, which goes back before `pending`. */
  private release(redacted: string): string {
    const start = this.redactor.partialFormStart(redacted);
    this.pending = redacted.slice(start) + this.pending;
    return redacted.slice(0, start);
  }

  /** What is left, at the end of the text. */
  flush(): string {
    const out = this.redactor.redact(this.pending);
    this.pending = "";
    return out;
  }
}
