import { describe, expect, it } from "vitest";
import { seccompFilter } from "../../src/sandbox/seccompFilter.js";

// The filter's behaviour is tested in the sandbox (securityBattery.test.ts); here its shape, for each arch it knows.
describe("seccompFilter", () => {
  it.each(["x64", "arm64"] as const)("builds a well-formed classic BPF program for %s", (arch) => {
    const program = seccompFilter(arch)!;
    expect(program.length % 8).toBe(0);
    const count = program.length / 8;
    // Every jump lands inside the program, and it ends with the three returns: allow, EPERM, ENOSYS.
    for (let index = 0; index < count; index++) {
      const code = program.readUInt16LE(index * 8);
      if ((code & 0x07) === 0x05) {
        expect(index + 1 + program.readUInt8(index * 8 + 2)).toBeLessThan(count);
        expect(index + 1 + program.readUInt8(index * 8 + 3)).toBeLessThan(count);
      }
    }
    expect([count - 3, count - 2, count - 1].map((index) => program.readUInt32LE(index * 8 + 4))).toEqual([0x7fff0000, 0x00050001, 0x00050026]);
  });

  it("has no filter for an architecture it has no table for", () => {
    expect(seccompFilter("ia32")).toBeUndefined();
  });
});
