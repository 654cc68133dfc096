import { describe, expect, it } from "vitest";
import { ConfigError, ERROR_CODES, type ErrorCode } from "../../src/errors.js";

describe("error codes", () => {
  it("are listed once each, in order, in snake_case", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect([...ERROR_CODES]).toEqual([...ERROR_CODES].sort());
    expect(ERROR_CODES.filter((code) => !/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/.test(code))).toEqual([]);
  });

  it("type every error's code", () => {
    const code: ErrorCode = new ConfigError("config_invalid", "x").code;
    expect(ERROR_CODES).toContain(code);
    // @ts-expect-error a code that is not listed is a type error
    expect(new ConfigError("config_invalidd", "x").code).toBe("config_invalidd");
  });
});
