import { describe, expect, it } from "vitest";
import { formatRef, looksLikeQualifiedRef, parseRef, SECTIONS } from "../../src/registry/index.js";

describe("parseRef", () => {
  it("parses a qualified ref into package, section and key", () => {
    expect(parseRef("weather.tools:get_weather")).toEqual({ package: "weather", section: "tools", key: "get_weather", text: "weather.tools:get_weather" });
    expect(parseRef("weather.prompts:system")).toEqual({ package: "weather", section: "prompts", key: "system", text: "weather.prompts:system" });
    expect(parseRef("my-pkg.proxies:fmp")?.section).toBe("proxies");
    expect(parseRef("my_pkg.tactics:review")?.package).toBe("my_pkg");
  });

  it("parses every section name", () => {
    for (const section of SECTIONS) expect(parseRef(`p.${section}:k`)?.section).toBe(section);
  });

  it("keeps the dots of a dotted package name: the last `.section:` splits", () => {
    expect(parseRef("acme.weather.tools:get_weather")).toEqual({ package: "acme.weather", section: "tools", key: "get_weather", text: "acme.weather.tools:get_weather" });
    expect(parseRef("a.b.c.prompts:system")?.package).toBe("a.b.c");
  });

  it("reads the member after `#`", () => {
    expect(parseRef("review.tactics:review#summarise")).toEqual({ package: "review", section: "tactics", key: "review", member: "summarise", text: "review.tactics:review#summarise" });
    expect(parseRef("review#summarise")).toEqual({ key: "review", member: "summarise", text: "review#summarise" });
    expect(parseRef("weather.tools:get_weather")).not.toHaveProperty("member");
  });

  it("parses a bare name with no package or section", () => {
    expect(parseRef("get_weather")).toEqual({ key: "get_weather", text: "get_weather" });
    expect(parseRef("get-weather")?.key).toBe("get-weather");
    expect(parseRef("get_weather")).not.toHaveProperty("package");
  });

  it.each([
    ["an unknown section", "weather.tool:get_weather"],
    ["an unknown section that looks close", "weather.prompt:system"],
    ["an empty key", "weather.tools:"],
    ["no package", ".tools:get_weather"],
    ["an empty string", ""],
    ["whitespace inside", "get weather"],
    ["a relative path", "./common.yaml"],
    ["a parent path", "../x"],
    ["an absolute path", "/etc/passwd"],
    ["a path with a slash", "tactics/common"],
    ["two members", "p.tactics:a#b#c"],
    ["an empty member", "p.tactics:a#"],
    ["a colon without a section", "weather:get_weather"],
  ])("rejects %s (%j)", (_what, text) => {
    expect(parseRef(text)).toBeUndefined();
  });
});

describe("looksLikeQualifiedRef and formatRef", () => {
  it("tells a ref from a relative path", () => {
    expect(looksLikeQualifiedRef("weather.tactics:common")).toBe(true);
    expect(looksLikeQualifiedRef("./common.yaml")).toBe(false);
    expect(looksLikeQualifiedRef("common.yaml")).toBe(false);
  });

  it("formats a ref that parses back to its parts", () => {
    const text = formatRef("weather", "tools", "get_weather");
    expect(text).toBe("weather.tools:get_weather");
    expect(parseRef(text)).toMatchObject({ package: "weather", section: "tools", key: "get_weather" });
  });
});
