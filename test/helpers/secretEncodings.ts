const PYTHON_ESCAPES: Record<string, string> = { "\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const HTML_NAMES: Record<string, string> = { "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" };

/** Every form a key comes back in from a server, a URL or a log. */
export function encodingsOf(secret: string): Record<string, string> {
  const component = encodeURIComponent(secret);
  return {
    raw: secret,
    encodeURIComponent: component,
    lowerCaseEscapes: component.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    encodeURI: encodeURI(secret),
    form: new URLSearchParams({ k: secret }).toString().slice(2),
    doubleEncoded: encodeURIComponent(component),
    json: JSON.stringify(secret).slice(1, -1),
    jsonInJson: JSON.stringify(JSON.stringify(secret).slice(1, -1)).slice(1, -1),
    jsonSlash: JSON.stringify(secret).slice(1, -1).replaceAll("/", "\\/"),
    html: secret.replace(/[&<>"']/g, (char) => `&${HTML_NAMES[char]};`),
    python: secret.replace(/[\\'\n\r\t]/g, (char) => PYTHON_ESCAPES[char]!),
    jsonUnicode: [...secret].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
    base64: Buffer.from(secret).toString("base64"),
    base64url: Buffer.from(secret).toString("base64url"),
    basicAuth: Buffer.from(`user:${secret}`).toString("base64"),
    basicAuth2: Buffer.from(`me:${secret}`).toString("base64"),
    basicAuth3: Buffer.from(`you:${secret}`).toString("base64"),
    hex: Buffer.from(secret).toString("hex"),
  };
}

/** The encodings of `secret` found in `text`, by name: empty when nothing leaked. */
export function leaksOf(text: string, secret: string): string[] {
  return Object.entries(encodingsOf(secret))
    .filter(([, form]) => text.includes(form))
    .map(([name]) => name);
}

/**
 * The base64 and hex runs of `text` that decode to bytes holding `secret`, and the secret itself, found with white
 * space (and JSON's `\n`, `\r`, `\t`, `\/` escapes) taken out first, at every alignment: empty when none does. What a
 * wrapped or spaced-out `base64`, `xxd -p` or `od` output leaves decodable.
 */
export function decodableLeaks(text: string, secret: string): string[] {
  const compact = text.replace(/\s+|\\+[nrt]|\\+(?=\/)/g, "");
  const bytes = Buffer.from(secret, "utf8");
  const leaks: string[] = [];
  if (compact.includes(secret)) leaks.push("raw");
  for (const run of compact.match(/[A-Za-z0-9+/_-]{8,}={0,2}/g) ?? []) {
    for (let skip = 0; skip < 4; skip++) {
      if (Buffer.from(run.slice(skip).replace(/-/g, "+").replace(/_/g, "/"), "base64").includes(bytes)) leaks.push(`base64 ${run}`);
    }
  }
  for (const run of compact.match(/[0-9a-fA-F]{16,}/g) ?? []) {
    for (let skip = 0; skip < 2; skip++) {
      const digits = run.slice(skip);
      if (Buffer.from(digits.slice(0, digits.length - (digits.length % 2)), "hex").includes(bytes)) leaks.push(`hex ${run}`);
    }
  }
  return leaks;
}
