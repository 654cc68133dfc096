import { describe, expect, it } from "vitest";
import { packageName } from "../../src/init/scaffoldPackage.js";

describe("lllm init's package name, from the folder's", () => {
  it("is an identifier that starts with a letter", () => {
    expect(packageName("/work/my-agent")).toBe("my_agent");
    expect(packageName("/work/123")).toBe("pkg_123");
    expect(packageName("/work/my.agent")).toBe("my_agent");
    expect(packageName("/work/---")).toBe("my_package");
  });

  it("keeps an accented letter without its accent, instead of dropping it", () => {
    expect(packageName("/work/Über")).toBe("uber");
    expect(packageName("/work/café-bot")).toBe("cafe_bot");
    expect(packageName("/work/Ångström")).toBe("angstrom");
    expect(packageName("/work/Straße")).toBe("strasse");
    expect(packageName("/work/Łódź")).toBe("lodz");
    expect(packageName("/work/Øresund")).toBe("oresund");
  });
});
