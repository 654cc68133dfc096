/** Names of environment variables whose values are credentials. */
// Not SESSION: XDG_SESSION_DESKTOP=ubuntu would blank out every "ubuntu" in the log.
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE)/i;
/** Shorter values are too likely to be ordinary words or numbers ("1", "true") to replace everywhere. */
const MIN_LENGTH = 6;

export const REDACTED = "[redacted]";

/**
 * Replaces every known secret value in text with `[redacted]`, in the encodings a value can take on its way into
 * stored text: as is, JSON-escaped, URL-encoded, and base64 (a Basic `Authorization` header, a tool echoing it).
 */
export class Redactor {
  readonly #needles: string[];

  constructor(secrets: Iterable<string>) {
    const needles = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < MIN_LENGTH) continue;
      for (const form of encodings(secret)) if (form.length >= MIN_LENGTH) needles.add(form);
    }
    // Longest first, so that a secret containing another is replaced whole.
    this.#needles = [...needles].sort((a, b) => b.length - a.length);
  }

  /** The values of the environment variables that look like credentials (`*_API_KEY`, `*_TOKEN`, …). */
  static fromEnvironment(env: NodeJS.ProcessEnv = process.env, extra: Iterable<string> = []): Redactor {
    const values = Object.entries(env)
      .filter(([name, value]) => SECRET_NAME.test(name) && typeof value === "string")
      .map(([, value]) => value as string);
    return new Redactor([...values, ...extra]);
  }

  redact(text: string): string {
    let result = text;
    for (const needle of this.#needles) if (result.includes(needle)) result = result.split(needle).join(REDACTED);
    return result;
  }

  /** `redact`, keeping null and undefined as they are. */
  redactOptional(text: string | null | undefined): string | null {
    return text === null || text === undefined ? null : this.redact(text);
  }
}

function encodings(secret: string): string[] {
  const base64 = Buffer.from(secret, "utf8").toString("base64");
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    JSON.stringify(JSON.stringify(secret)).slice(1, -1).replace(/^\\"|\\"$/g, ""),
    encodeURIComponent(secret),
    base64,
    base64.replace(/=+$/, ""),
    Buffer.from(secret, "utf8").toString("base64url"),
  ];
}
