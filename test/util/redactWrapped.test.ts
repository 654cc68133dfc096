import { describe, expect, it } from "vitest";
import { REDACTED, SecretRedactor } from "../../src/util/redact.js";
import { StreamRedactor } from "../../src/util/StreamRedactor.js";
import { decodableLeaks } from "../helpers/secretEncodings.js";

// A key that `base64` (76 columns), `xxd -p` (60), `od` or `xxd` print is wrapped or spaced out: each of its hex and
// base64 forms must be found with white space anywhere between its characters, at every byte alignment.
const KEYS = ["sk-wrap-0123456789abcdefghijklmnopqrstuvwxyz+/ABCDEF", "pa55:w0rd/with+slashes==", "clé-secrète-ü-0123456789"];

/** The text wrapped into lines of `width` characters, the first of which already holds `used` (a prefix on it). */
function wrap(text: string, width: number, used: number, lineEnd = "\n"): string {
  const lines: string[] = [];
  let at = 0;
  let room = width - used;
  while (at < text.length) {
    lines.push(text.slice(at, at + room));
    at += room;
    room = width;
  }
  return lines.join(lineEnd);
}

/** `od -A n -t x1`'s layout: ` xx` for each byte, 16 a line. */
function odStyle(bytes: Buffer, upper = false): string {
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0"));
  const lines: string[] = [];
  for (let at = 0; at < hex.length; at += 16) lines.push(" " + hex.slice(at, at + 16).join(" "));
  const text = lines.join("\n");
  return upper ? text.toUpperCase() : text;
}

/** `xxd`'s groups of two bytes (`7365 6372`), eight a line, without its offsets and text column. */
function groupStyle(bytes: Buffer): string {
  const hex = bytes.toString("hex");
  const groups = hex.match(/.{1,4}/g)!;
  const lines: string[] = [];
  for (let at = 0; at < groups.length; at += 8) lines.push(groups.slice(at, at + 8).join(" "));
  return lines.join("\n");
}

/** Every wrapped or spaced-out form of the key, by name: alone and inside a longer encoded text, at each alignment. */
function wrappedForms(key: string): Array<[string, string]> {
  const forms: Array<[string, string]> = [];
  const bytes = Buffer.from(key, "utf8");
  for (let before = 0; before < 3; before++) {
    for (const after of [0, 1, 5]) {
      const inside = Buffer.concat([Buffer.from("xyz".slice(0, before)), bytes, Buffer.alloc(after, 0x41)]);
      const base64 = inside.toString("base64");
      const hex = inside.toString("hex");
      const at = `${before} bytes before, ${after} after`;
      for (const used of [0, 1, 2, 3, 7, 20, 40, 60, 70, 75]) {
        forms.push([`base64 76 columns, ${used} used, ${at}`, wrap(base64, 76, used)]);
        forms.push([`base64url 76 columns, ${used} used, ${at}`, wrap(inside.toString("base64url"), 76, used)]);
        forms.push([`xxd -p 60 columns, ${used} used, ${at}`, wrap(hex, 60, used % 60)]);
      }
      for (const width of [4, 8, 16, 64]) {
        forms.push([`base64 ${width} columns CRLF, ${at}`, wrap(base64, width, 1, "\r\n")]);
        forms.push([`HEX ${width} columns CRLF, ${at}`, wrap(hex.toUpperCase(), width, 1, "\r\n")]);
      }
      forms.push([`od, ${at}`, odStyle(inside)]);
      forms.push([`od upper case, ${at}`, odStyle(inside, true)]);
      forms.push([`xxd groups, ${at}`, groupStyle(inside)]);
      forms.push([`base64 a space between each character, ${at}`, [...base64].join(" ")]);
      forms.push([`hex tabs and spaces, ${at}`, hex.replace(/(.)(.)/g, "$1\t$2  ")]);
      for (const prefix of ["user:", "me:", "you:"]) forms.push([`Basic ${prefix}key wrapped, ${at}`, wrap(Buffer.from(prefix + key).toString("base64"), 76, 70)]);
    }
  }
  return forms;
}

describe("SecretRedactor: wrapped and spaced-out hex and base64", () => {
  for (const key of KEYS) {
    it(`removes every wrapped form of ${JSON.stringify(key)}, in a text and in JSON (inside JSON too), leaving the rest`, () => {
      const redactor = new SecretRedactor();
      redactor.add(key);
      const forms = wrappedForms(key);
      expect(forms.length).toBeGreaterThan(400);
      for (const [name, form] of forms) {
        // The form is decodable as it stands: the test would prove nothing otherwise.
        expect(decodableLeaks(form, key), name).not.toEqual([]);
        const text = `Output:\n${form}\n-- end of output.`;
        const redacted = redactor.redact(text);
        expect(redacted, name).toContain(REDACTED);
        expect(decodableLeaks(redacted, key), name).toEqual([]);
        expect(redacted.startsWith("Output:\n"), name).toBe(true);
        expect(redacted.endsWith("\n-- end of output."), name).toBe(true);
        for (const json of [JSON.stringify({ result: text }), JSON.stringify(JSON.stringify({ result: text }))]) {
          const inJson = redactor.redact(json);
          expect(decodableLeaks(inJson, key), `${name} in ${json.slice(0, 12)}`).toEqual([]);
        }
      }
    });
  }

  it("passes a long run of backslashes in one step (each used to scan the rest of the run: 160,000 took 30 s)", () => {
    const redactor = new SecretRedactor();
    redactor.add("sk-backslash-test-1234567");
    const text = `start ${"\\".repeat(400_000)}x end ${Buffer.from("sk-backslash-test-1234567").toString("base64")}`;
    expect(redactor.redact(text)).toBe(`start ${"\\".repeat(400_000)}x end ${REDACTED}`);
  });

  it("takes the letter of an escape (`\\n`) for a gap, not for a form's first character: a JSON record stays JSON", () => {
    // A key that begins with `g` has a base64 form (at the third byte alignment) that begins with `n`.
    const key = "ghp_abcdefgh1234567890ABCDEFGH";
    const form = Buffer.concat([Buffer.alloc(2), Buffer.from(key)]).toString("base64").slice(3);
    expect(form.startsWith("n")).toBe(true);
    const redactor = new SecretRedactor();
    redactor.add(key);
    // A line break, then the rest of that form spaced out: the `n` there is the escape's, not the form's.
    const record = JSON.stringify({ text: `line\n${form.slice(1, 12)} ${form.slice(12)}` });
    const redacted = redactor.redactKnown(record);
    expect(redacted).not.toContain(`\\${REDACTED}`);
    expect(() => JSON.parse(redacted)).not.toThrow();
  });

  it("passes a long run of escaped line breaks in one pass, with a key whose form may begin with their letter (a pattern that read on from each letter took a minute)", () => {
    const redactor = new SecretRedactor();
    redactor.add("ghp_abcdefgh1234567890ABCDEFGH");
    for (const escape of ["\\n", "\\r", "\\t", "\\r\\n"]) {
      const text = `{"content":"${escape.repeat(Math.floor(200_000 / escape.length))}"}`;
      expect(redactor.redact(text)).toBe(text);
    }
  });

  it("leaves URLs as they are in what the model reads (redactKnown), a known password in one too", () => {
    const redactor = new SecretRedactor();
    redactor.add("pa55-word-known-123");
    expect(redactor.redactKnown("clone ssh://git@github.com/org/repo.git, db postgres://app@db:5432/main")).toBe("clone ssh://git@github.com/org/repo.git, db postgres://app@db:5432/main");
    expect(redactor.redactKnown("https://me:pa55-word-known-123@host/x")).toBe(`https://me:${REDACTED}@host/x`);
    // What is printed or stored masks every URL's userinfo but an ssh URL's user name alone (an account's name).
    expect(redactor.redact("ssh://git@github.com/org/repo.git")).toBe("ssh://git@github.com/org/repo.git");
    expect(redactor.redact("https://app@db/main ssh://git:pw-unknown-77@github.com/x")).toBe(`https://${REDACTED}@db/main ssh://${REDACTED}@github.com/x`);
  });

  it("leaves ordinary text with line breaks and spaces as it was", () => {
    const redactor = new SecretRedactor();
    for (const key of KEYS) redactor.add(key);
    const texts = ["nothing to hide here\nnor here\r\n\tor here", "c2 st d3 Jh cC 0w MT Iz", "73 6b 2d 77 72 61 70\nother words", JSON.stringify({ a: "line\none", b: "x\\/y" }), "trailing backslash \\"];
    for (const text of texts) expect(redactor.redact(text)).toBe(text);
  });
});

describe("StreamRedactor: wrapped forms split across pieces", () => {
  for (const size of [1, 3, 7, 16, 50]) {
    it(`removes a wrapped key that arrives in pieces of ${size} characters`, () => {
      const key = KEYS[0]!;
      const redactor = new SecretRedactor();
      redactor.add(key);
      const forms = wrappedForms(key).filter((_, index) => index % 7 === 0);
      for (const [name, form] of forms) {
        const text = `Here is the output:\n${form}\nDone, and more words after it.\n`;
        const stream = new StreamRedactor(redactor);
        let shown = "";
        for (let at = 0; at < text.length; at += size) shown += stream.push(text.slice(at, at + size));
        shown += stream.flush();
        expect(decodableLeaks(shown, key), name).toEqual([]);
        expect(shown, name).toContain(REDACTED);
        expect(shown, name).toBe(redactor.redact(text));
      }
    });
  }

  it("still passes lines on while it holds back where a form may have begun", () => {
    const redactor = new SecretRedactor();
    redactor.add(KEYS[0]);
    const stream = new StreamRedactor(redactor);
    expect(stream.push("first line.\nsecond line.\n")).toBe("first line.\nsecond line.\n");
    // The line ends with the first characters of the key's base64 (`c2st`): held until the next line says more.
    const start = Buffer.from(KEYS[0]!).toString("base64").slice(0, 4);
    expect(stream.push(`a line ending in ${start}\n`)).toBe("a line ending in ");
    expect(stream.push("that goes on otherwise.\n")).toBe(`${start}\nthat goes on otherwise.\n`);
  });
});
