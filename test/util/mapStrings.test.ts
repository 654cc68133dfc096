import { describe, expect, it } from "vitest";
import { mapStrings } from "../../src/util/mapStrings.js";

describe("mapStrings", () => {
  it("maps an object met twice once, and keeps it one object (a run's calls share their messages)", () => {
    const message = { role: "user", content: "hi" };
    const run = { calls: [{ messages: [message] }, { messages: [message, { role: "assistant", content: "yo" }] }] };
    const seen: string[] = [];
    const mapped = mapStrings(run, (text) => {
      seen.push(text);
      return text === "hi" ? "HI" : text;
    });
    expect(mapped.calls[0]!.messages[0]).toBe(mapped.calls[1]!.messages[0]);
    expect(mapped.calls[1]!.messages[0]).toEqual({ role: "user", content: "HI" });
    expect(seen.filter((text) => text === "hi")).toHaveLength(1);
  });

  it("returns what nothing changed in as it is, and keeps a __proto__ key an own property", () => {
    const value = { a: ["x", 1, null, { b: true }] };
    expect(mapStrings(value, (text) => text)).toBe(value);
    const tricky = JSON.parse('{"__proto__": "p", "k": "v"}') as Record<string, unknown>;
    const mapped = mapStrings(tricky, (text) => `${text}!`);
    expect(Object.keys(mapped)).toEqual(["__proto__!", "k!"]);
    const own = mapStrings(tricky, (text) => (text === "v" ? "w" : text));
    expect(Object.hasOwn(own, "__proto__")).toBe(true);
    expect(own["__proto__"]).toBe("p");
  });
});
