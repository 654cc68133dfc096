import { describe, expect, it } from "vitest";
import { environmentSecrets, SecretRedactor } from "../../src/util/redact.js";
import { maskUrlCredentials, urlCredentials, urlCredentialsIn } from "../../src/util/urlCredentials.js";

describe("credentials in URLs", () => {
  it.each([
    ["http://user:pass@host/v1", "http://[redacted]@host/v1"],
    ["see https://tok3n-0123456789@api.example.com/x?q=a@b for details", "see https://[redacted]@api.example.com/x?q=a@b for details"],
    ["a raw @ in the password: http://u:p@ss@host:8080/v1", "a raw @ in the password: http://[redacted]@host:8080/v1"],
    ['{"url":"http://u:p%40ss@host/v1","mail":"me@example.com"}', '{"url":"http://[redacted]@host/v1","mail":"me@example.com"}'],
    ["redis://:only-a-password@127.0.0.1:6379/0", "redis://[redacted]@127.0.0.1:6379/0"],
    // JSON with escaped slashes (PHP, some loggers), and that inside JSON again.
    ['{"dsn":"postgres:\\/\\/bob:hunter2@db.example\\/app"}', '{"dsn":"postgres:\\/\\/[redacted]@db.example\\/app"}'],
    ['"{\\"dsn\\":\\"http:\\\\\\/\\\\\\/bob:hunter2@db\\"}"', '"{\\"dsn\\":\\"http:\\\\\\/\\\\\\/[redacted]@db\\"}"'],
    // A hint's placeholders show the form and stay; a value beside them does not.
    ["--queue redis://:PASSWORD@host:port (or redis://USER:PASSWORD@host:port)", "--queue redis://:PASSWORD@host:port (or redis://USER:PASSWORD@host:port)"],
    ["redis://USER:PASSWORDx@host", "redis://[redacted]@host"],
    ["no userinfo: http://host/v1?to=me@example.com and me@example.com", "no userinfo: http://host/v1?to=me@example.com and me@example.com"],
    // An ssh URL's user is an account's name (ssh signs in with a key): a hint's git+ssh://git@host stays readable.
    ["an SSH key: git+ssh://git@host/repo.git, or ssh://deploy@host:22/x", "an SSH key: git+ssh://git@host/repo.git, or ssh://deploy@host:22/x"],
    ["ssh://deploy:hunter2@host/x and https://ghp_tok3n@host/x", "ssh://[redacted]@host/x and https://[redacted]@host/x"],
  ])("masks the userinfo of %j", (text, masked) => {
    expect(maskUrlCredentials(text)).toBe(masked);
  });

  it("masks in one pass over a long dotted or hyphenated run", () => {
    // Each word of such a run began a scheme that was walked to the run's end: quadratic, 300 KB took most of a minute.
    // A return of that makes this test outlast its timeout.
    for (const run of ["a.".repeat(150_000), "ab-".repeat(100_000)]) {
      expect(maskUrlCredentials(`${run} see http://u:secret@h`)).toBe(`${run} see http://[redacted]@h`);
    }
  });

  it("finds passwords (decoded), and a user name that stands alone (a token)", () => {
    expect(urlCredentials("http://alice:pa55%2Fword@host http://ghp_token123456@github.com")).toEqual(["pa55/word", "ghp_token123456"]);
    expect(urlCredentials("git+ssh://git@github.com/org/repo.git ssh://deploy:s3cret-pass@host")).toEqual(["s3cret-pass"]);
    expect(urlCredentialsIn({ global: { invoker_config: { base_url: "http://u:secret-one@h/v1" } }, servers: [{ url: "https://u:secret-two@h/mcp" }] })).toEqual(expect.arrayContaining(["secret-one", "secret-two"]));
  });

  it("takes the passwords of URL-like variables of the environment, not their other values", () => {
    const env = { OPENAI_BASE_URL: "http://me:env-password-1@host/v1", HTTPS_PROXY: "http://proxy-password-2@proxy:3128", HOME: "/home/x:notsecret@y", PLAIN_URL: "http://host/v1" };
    expect(environmentSecrets(env).sort()).toEqual(["env-password-1", "proxy-password-2"]);
  });

  it("a redactor masks userinfo even with no secret, and a registered password in every encoding", () => {
    expect(new SecretRedactor().redact("at http://u:short@h/v1")).toBe("at http://[redacted]@h/v1");
    const redactor = new SecretRedactor();
    redactor.add("pa55-Secret/word");
    const basic = Buffer.from("alice:pa55-Secret/word").toString("base64");
    expect(redactor.redact(`Authorization: Basic ${basic}`)).not.toContain(basic);
    expect(redactor.redact("pa55-Secret%2Fword")).toBe("[redacted]");
  });

  it("a redactor with a parent removes the parent's secrets as they are when it redacts", () => {
    const parent = new SecretRedactor();
    const child = new SecretRedactor(parent);
    child.add("own-secret-123");
    parent.add("later-secret-456");
    expect(child.redact("own-secret-123 later-secret-456")).toBe("[redacted] [redacted]");
    expect(child.size).toBe(2);
  });
});
