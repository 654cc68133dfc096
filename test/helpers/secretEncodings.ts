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
