import { describe, expect, it } from "vitest";
import { REDACTED, SecretRedactor } from "../../src/util/redact.js";
import { StreamRedactor } from "../../src/util/StreamRedactor.js";
import { encodingsOf, leaksOf } from "../helpers/secretEncodings.js";

/** A key as long as OpenAI's project keys (164 characters). */
const LONG_KEY = `sk-proj-${"Xq7_Lm2-Rt9zWv4K".repeat(9)}Ab3_x0p9Zk12`;

/** Keys with characters that every encoding writes otherwise: `+`, `/`, a space, quotes, `&`, `%`, accents. */
const KEYS = ["ab+c/d=9", "sk-test 1234+5678", "clé-secrète-ü", "k€y-ß-s3cret", "q%25w'e\"r<t>&y"];

function redactorOf(keys: string[]): SecretRedactor {
  const redactor = new SecretRedactor();
  for (const key of keys) redactor.add(key);
  return redactor;
}

/** What a stream shows after each piece, and at the end (`flush`) as the last entry. */
function streamed(redactor: SecretRedactor, pieces: string[]): string[] {
  const stream = new StreamRedactor(redactor);
  return [...pieces.map((piece) => stream.push(piece)), stream.flush()];
}

/** The text in pieces of the sizes given, in turn. */
function cut(text: string, sizes: number[]): string[] {
  const pieces: string[] = [];
  for (let at = 0, index = 0; at < text.length; index += 1) {
    const size = sizes[index % sizes.length]!;
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

/** A small deterministic generator: the same texts on every run. */
function generator(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % below;
  };
}

describe("StreamRedactor", () => {
  it("passes a one-line answer on as it arrives, holding back only its last word, with a long key registered", () => {
    const answer = "It is sunny in Paris today, 22 degrees, with a light wind from the west, and tomorrow looks the same.";
    const pieces = cut(answer, [4]);
    const shown = streamed(redactorOf([LONG_KEY]), pieces);
    expect(shown.join("")).toBe(answer);
    // After each piece, all has been shown but the word still arriving.
    for (let index = 0; index < pieces.length; index += 1) {
      const arrived = pieces.slice(0, index + 1).join("");
      const shownSoFar = shown.slice(0, index + 1).join("");
      expect(arrived.startsWith(shownSoFar), `after ${JSON.stringify(arrived)}`).toBe(true);
      expect(shownSoFar.length, `after ${JSON.stringify(arrived)}`).toBeGreaterThanOrEqual(arrived.replace(/\S*$/, "").length);
    }
  });

  it("redacts a key split across pieces, and passes the text around it on", () => {
    const redactor = redactorOf(["sk-stream-secret-123456"]);
    const shown = streamed(redactor, ["Your key is sk-str", "eam-secr", "et-123456 and\nmore ", "text"]);
    expect(shown).toEqual(["Your key is ", "", `${REDACTED} and\nmore `, "", "text"]);
  });

  it("passes pieces on when no secret is known, and keeps a long run without a word's end moving", () => {
    // With no key known, only a word that may begin a URL with a password waits.
    expect(new StreamRedactor(new SecretRedactor()).push("abc, def ")).toBe("abc, def ");
    const stream = new StreamRedactor(redactorOf(["sk-stream-secret-123456"]));
    const long = "x".repeat(5000);
    const shown = stream.push(long);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown + stream.flush()).toBe(long);
  });

  it("holds an escape or a reference cut in two until what follows shows what it is", () => {
    const redactor = redactorOf(["ab+c/d=9"]);
    // `%6` may be the beginning of `%61` (the key's `a`), `&#9` of `&#97;`: held, then passed on with what follows.
    expect(streamed(redactor, ["100 %6", "0 of it; a &#9", "0; b"])).toEqual(["100 ", "%60 of it; a ", "&#90; ", "b"]);
    expect(streamed(redactor, ["key: ab%2", "Bc%2Fd%3", "D9 done"]).join("")).toBe(`key: ${REDACTED} done`);
  });

  it("removes every encoding of a key, whatever the pieces, exactly as the whole text is redacted", () => {
    const redactor = redactorOf(KEYS);
    for (const key of KEYS) {
      for (const [name, form] of Object.entries(encodingsOf(key))) {
        const text = `Here it is: ${form} and the rest; ${form}`;
        for (const sizes of [[1], [2], [3], [5, 1], [7, 2, 1]]) {
          const shown = streamed(redactor, cut(text, sizes)).join("");
          expect(shown, `${name} in pieces of ${sizes.join(",")}`).toBe(redactor.redact(text));
          expect(leaksOf(shown, key), name).toEqual([]);
        }
      }
    }
  });

  it("gives the whole text's redaction for random texts of keys' forms and their characters, cut anywhere", () => {
    // An emoji too: pieces may cut its two UTF-16 halves apart.
    const keys = [...KEYS, "k€y-😀-s3cret"];
    const redactor = redactorOf(keys);
    const random = generator(20261206);
    const noise = "ab+c/d=9 %25&#x;\\u00€😀sk-test1234'\"<>qwe";
    for (let round = 0; round < 3000; round += 1) {
      let text = "";
      for (let part = 1 + random(4); part > 0; part -= 1) {
        for (let char = random(8); char > 0; char -= 1) text += noise[random(noise.length)]!;
        const forms = Object.values(encodingsOf(keys[random(keys.length)]!));
        text += forms[random(forms.length)]!;
      }
      const sizes = [1 + random(6), 1 + random(6), 1 + random(6)];
      expect(streamed(redactor, cut(text, sizes)).join(""), JSON.stringify({ text, sizes })).toBe(redactor.redact(text));
    }
  });

  it("passes on no part of a key whose beginning is another key", () => {
    const short = "abcdefgh12";
    const long = "abcdefgh12-and-then-some";
    const redactor = redactorOf([short, long]);
    for (const size of [1, 2, 3, 10]) {
      const shown = streamed(redactor, cut(`one ${long} two ${short} three`, [size])).join("");
      expect(shown).toBe(`one ${REDACTED} two ${REDACTED} three`);
    }
  });

  it("masks the password of a URL that arrives in pieces", () => {
    const redactor = redactorOf([LONG_KEY]);
    const text = "Fetch it from https://someone:hunter2-pass@example.com/data or http:\\/\\/me:pw-in-json@host.test/x today.";
    for (const size of [1, 3, 8]) {
      const shown = streamed(redactor, cut(text, [size])).join("");
      expect(shown).toBe(`Fetch it from https://${REDACTED}@example.com/data or http:\\/\\/${REDACTED}@host.test/x today.`);
    }
  });
});

describe("StreamRedactor: what a review found", () => {
  const PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nVJTUzI1NiIsInR5cCI6IkpXVCJ9abcd\n-----END PRIVATE KEY-----";

  it("removes a key one of whose characters alone is HTML-escaped, in a piece with no other escape", () => {
    const redactor = redactorOf(['pass"word&123']);
    expect(streamed(redactor, ["100% ", 'pass"word&amp;123']).join("")).toBe(`100% ${REDACTED}`);
    // XML escapes `&`, `<` and `>` only: the text holds no `%`, `\u` or `&#`.
    expect(redactorOf(['Tr0ub4dor&3"xyz']).redact('<password>Tr0ub4dor&amp;3"xyz</password>')).toBe(`<password>${REDACTED}</password>`);
  });

  it("with a key of several lines known, passes on no part of a key whose beginning is another key, nor of a password with an @", () => {
    expect(streamed(redactorOf([PEM, "abcdefgh", "abcdefgh-and-more-secret"]), ["x abcdefgh", "-and-more-secret y"]).join("")).toBe(`x ${REDACTED} y`);
    expect(streamed(redactorOf([PEM]), ["db: postgres://admin:s3cr@t", "-pa55@db.internal/app ok"]).join("")).toBe(`db: postgres://${REDACTED}@db.internal/app ok`);
  });

  it("held back long (a form across every cut), still removes a key that another key's end begins", () => {
    const redactor = redactorOf(["passw=wo", "rdsecret", "rdsecret-more-and-more"]);
    const prose = "word ".repeat(900);
    const shown = streamed(redactor, [`${prose}passw=wordsecret`, "-more-and-more", " done"]).join("");
    expect(shown).toBe(redactor.redact(`${prose}passw=wordsecret-more-and-more done`));
    expect(shown.endsWith(`${REDACTED}${REDACTED} done`)).toBe(true);
  });

  it("masks a URL's password longer than any key's form, and with no key known", () => {
    const long = `see http://user:${"x".repeat(200)}@host/ ok`;
    expect(streamed(redactorOf(["abcdefgh"]), cut(long, [3])).join("")).toBe(`see http://${REDACTED}@host/ ok`);
    expect(streamed(new SecretRedactor(), ["http://user:pa", "ss@host x"]).join("")).toBe(`http://${REDACTED}@host x`);
  });

  it("redacts a numeric reference with zeros before its digits as the whole text is, one character at a time", () => {
    const redactor = redactorOf(["secretkey"]);
    for (const zeros of [0, 3, 8]) {
      const text = `a &#${"0".repeat(zeros)}115;ecretkey b`;
      expect(streamed(redactor, cut(text, [1])).join(""), `${zeros} zeros`).toBe(`a ${REDACTED} b`);
    }
    // No encoder writes so many: not a form of the key (a form longer than a stream holds back would pass it whole).
    const padded = `a &#${"0".repeat(200)}115;ecretkey b`;
    expect(streamed(redactor, cut(padded, [1])).join("")).toBe(redactor.redact(padded));
  });

  it("never passes on half of an emoji", () => {
    const shown = streamed(redactorOf([LONG_KEY]), ["Great job \ud83d", "\ude00 well done"]);
    for (const piece of shown) expect(/[\ud800-\udbff]$/.test(piece), JSON.stringify(piece)).toBe(false);
    expect(shown.join("")).toBe("Great job \ud83d\ude00 well done");
  });
});
