import { describe, expect, it } from "vitest";
import { REDACTED, SecretRedactor } from "../../src/util/redact.js";
import { StreamRedactor } from "../../src/util/StreamRedactor.js";
import { encodingsOf, leaksOf } from "../helpers/secretEncodings.js";

const KEY = "ab+c/d=9";

describe("SecretRedactor", () => {
  it("removes a key with URL-special characters in every encoding", () => {
    const redactor = new SecretRedactor();
    redactor.add(KEY);
    for (const [name, form] of Object.entries(encodingsOf(KEY))) {
      const text = `before ${form} after`;
      const redacted = redactor.redact(text);
      expect(redacted, name).toContain(REDACTED);
      for (const [other, leaked] of Object.entries(encodingsOf(KEY))) {
        if (leaked.length >= 8) expect(redacted, `${name} leaks as ${other}`).not.toContain(leaked);
      }
    }
  });

  it("redacts a text without escapes (%XX, \\u, \\/, &#) as it redacts the same text with one", () => {
    // A text without escapes is matched by a pattern of the unescaped forms only (cheaper for V8 to compile); one
    // with an escape by the pattern of every form. A `%` at the end cannot be part of any match, so both must agree.
    const keys = [KEY, "sk-test 1234+5678", "clé-secrète-ü", "p/a/s/s/w/o/r/d"];
    const redactor = new SecretRedactor();
    for (const key of keys) redactor.add(key);
    const texts = [
      "nothing to hide here",
      `{"result":"line one\\nline \\"two\\"", "key":"${keys[1]}"}`,
      "sk-test+1234 5678 and sk-test 1234 5678 and SK-TEST 1234+5678",
      ...keys.flatMap((key) => Object.values(encodingsOf(key)).map((form) => `before ${form} after\ttab`)),
      `${keys[0]}${keys[2]}${keys[3]}`,
    ].filter((text) => !/%|\\[u/]|&#/.test(text));
    expect(texts.length).toBeGreaterThan(30);
    let redacted = 0;
    for (const text of texts) {
      const plain = redactor.redact(text);
      expect(redactor.redact(`${text}%`), text).toBe(`${plain}%`);
      if (plain !== text) redacted++;
    }
    expect(redacted).toBeGreaterThan(25);
  });

  it("removes a key with characters JSON, Python and HTML escape, in JSON inside JSON too", () => {
    // A tool's arguments and result, and the run log's records, are JSON texts; a result may hold JSON itself.
    const key = `q"u\\o&t<e>'s 42\ttab`;
    const redactor = new SecretRedactor();
    redactor.add(key);
    const texts: Array<readonly [string, string]> = Object.entries(encodingsOf(key)).map(([name, form]) => [name, `before ${form} after`] as const);
    let nested = `{"result": ${JSON.stringify(`the key: ${key}.`)}}`;
    for (let depth = 1; depth <= 3; depth++, nested = JSON.stringify(nested)) texts.push([`JSON ${depth} deep`, nested]);
    for (const [name, text] of texts) {
      const redacted = redactor.redact(text);
      expect(redacted, name).toContain(REDACTED);
      expect(leaksOf(redacted, key), name).toEqual([]);
      // No part of an escape is left behind it: the form is removed whole.
      expect(redacted, name).not.toMatch(/\[redacted\]\\/);
    }
  });

  it("removes a multi-line key (a PEM private key), in JSON too, and a streamed answer holds back as many lines", () => {
    const lines = ["-----BEGIN PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "VJTUt9Us8cKjMzEfYyjiWA4R4bQ4WwE2", "-----END PRIVATE KEY-----"];
    const key = `${lines.join("\n")}\n`;
    const redactor = new SecretRedactor();
    redactor.add(key);
    expect(redactor.redact(`the key is ${key}`)).toBe(`the key is ${REDACTED}`);
    expect(redactor.redact(JSON.stringify({ key }))).toBe(`{"key":"${REDACTED}"}`);
    // An answer streamed in pieces that cut its lines anywhere: the key's lines are not passed on one at a time, and
    // the answer still flows, as many lines behind as the key has line breaks.
    const stream = new StreamRedactor(redactor);
    const after = ["Done.", "one", "two", "three", "four", "five", "six", "End."].join("\n");
    const answer = `Here it is:\n${key}${after}`;
    let shown = "";
    for (let at = 0; at < answer.length; at += 7) {
      shown += stream.push(answer.slice(at, at + 7));
      expect(shown).not.toMatch(/MII|VJTU|-----END/);
    }
    expect(shown).toBe(`Here it is:\n${REDACTED}Done.\none\ntwo\n`);
    shown += stream.flush();
    expect(shown).toBe(`Here it is:\n${REDACTED}${after}`);
  });

  it("leaves a parent's secrets to the parent: a text is scanned for each secret once", () => {
    const parent = new SecretRedactor();
    parent.add("sk-parent-0123456789");
    const child = new SecretRedactor(parent);
    child.add("sk-parent-0123456789");
    child.add("sk-child-0123456789");
    expect(child.size).toBe(2);
    expect(child.redact("sk-parent-0123456789 and sk-child-0123456789")).toBe(`${REDACTED} and ${REDACTED}`);
  });

  it("removes, in one pass, what its parent learns after its first text, and a secret of its own that holds the parent's whole", () => {
    const parent = new SecretRedactor();
    const child = new SecretRedactor(parent);
    child.add("sk-run-0123456789-extra");
    expect(child.redact("key sk-late-0123456789 here")).toBe("key sk-late-0123456789 here");
    // The provider registers its key with the process-wide redactor once the run has begun.
    parent.add("sk-late-0123456789");
    parent.add("sk-run-0123456789");
    expect(child.redact("key sk-late-0123456789 here, sk-run-0123456789-extra there")).toBe(`key ${REDACTED} here, ${REDACTED} there`);
    expect(child.redact("as JSON: sk-late-\\u00301234567%389")).toBe(`as JSON: ${REDACTED}`);
    // Another redactor of the same secrets (the next run's) redacts the same.
    const next = new SecretRedactor(parent);
    next.add("sk-run-0123456789-extra");
    expect(next.redact("sk-run-0123456789-extra, sk-late-0123456789")).toBe(`${REDACTED}, ${REDACTED}`);
    expect(parent.redact("sk-run-0123456789-extra")).toBe(`${REDACTED}-extra`);
  });

  it("keeps ordinary text and ignores short values", () => {
    const redactor = new SecretRedactor();
    redactor.add("short");
    redactor.add("sk-test-1234567890");
    expect(redactor.redact("a short text about sk-test")).toBe("a short text about sk-test");
    expect(redactor.redact("Bearer sk-test-1234567890.")).toBe(`Bearer ${REDACTED}.`);
  });

  it("redacts JSON values deeply, keys included, and error chains", () => {
    const redactor = new SecretRedactor();
    redactor.add(KEY);
    expect(redactor.redactValue({ url: `https://x/?k=${encodeURIComponent(KEY)}`, list: [KEY], [KEY]: 1 })).toEqual({ url: `https://x/?k=${REDACTED}`, list: [REDACTED], [REDACTED]: 1 });
    const error = new Error(`outer ${KEY}`, { cause: new Error(`inner ${encodeURIComponent(KEY)}`) });
    redactor.redactError(error);
    expect(error.message).toBe(`outer ${REDACTED}`);
    expect(error.stack).not.toContain(KEY);
    expect((error.cause as Error).message).toBe(`inner ${REDACTED}`);
  });

  it("returns a value with nothing to redact as it is, and copies only what changed, leaving the original whole", () => {
    const redactor = new SecretRedactor();
    const answer = { city: "Paris", days: [{ t: 21, note: "sunny" }, { t: 19 }], link: "https://example.com/a@b" };
    expect(redactor.redactValue(answer)).toBe(answer); // no secret registered, no URL credentials: nothing to copy
    redactor.add(KEY);
    expect(redactor.redactValue(answer)).toBe(answer);

    const nested = { keep: { deep: [1, "two"] }, list: ["a", `key ${KEY}`, "c"], ["__proto__"]: { x: KEY }, last: `https://user:pw@host/` };
    const before = structuredClone(nested);
    const redacted = redactor.redactValue(nested);
    expect(redacted).toEqual({ keep: { deep: [1, "two"] }, list: ["a", `key ${REDACTED}`, "c"], ["__proto__"]: { x: REDACTED }, last: `https://${REDACTED}@host/` });
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(Object.hasOwn(redacted, "__proto__")).toBe(true);
    expect(redacted.keep).toBe(nested.keep); // unchanged parts are shared, not copied
    expect(nested).toEqual(before); // the original is not touched
  });
});

describe("registerEnvironmentSecrets", () => {
  it("registers credential-like variables only", async () => {
    const { registerEnvironmentSecrets, redactSecrets } = await import("../../src/util/redact.js");
    registerEnvironmentSecrets({ MY_SERVICE_TOKEN: "tok-0123456789", SOME_API_KEY: "key-0123456789", HOME_DIRECTORY: "/home/someone-long" });
    expect(redactSecrets("tok-0123456789 key-0123456789 /home/someone-long")).toBe(`${REDACTED} ${REDACTED} /home/someone-long`);
  });
});
