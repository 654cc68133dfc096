import { describe, expect, it } from "vitest";
import { REDACTED, SecretRedactor } from "../../src/util/redact.js";
import { encodingsOf } from "../helpers/secretEncodings.js";

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
});

describe("registerEnvironmentSecrets", () => {
  it("registers credential-like variables only", async () => {
    const { registerEnvironmentSecrets, redactSecrets } = await import("../../src/util/redact.js");
    registerEnvironmentSecrets({ MY_SERVICE_TOKEN: "tok-0123456789", SOME_API_KEY: "key-0123456789", HOME_DIRECTORY: "/home/someone-long" });
    expect(redactSecrets("tok-0123456789 key-0123456789 /home/someone-long")).toBe(`${REDACTED} ${REDACTED} /home/someone-long`);
  });
});
