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

  // memfd_create and System V shared memory, semaphores and messages hold memory no process's size shows.
  it.each([
    ["x64", [319, 447, 29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71]],
    ["arm64", [279, 447, 194, 195, 196, 197, 190, 191, 192, 193, 186, 187, 188, 189]],
  ] as const)("answers ENOSYS to anonymous files and System V IPC on %s", (arch, calls) => {
    const program = seccompFilter(arch)!;
    const count = program.length / 8;
    const answers = new Map<number, number>();
    for (let index = 0; index < count; index++) {
      if (program.readUInt16LE(index * 8) !== 0x15) continue; // JEQ K
      const target = index + 1 + program.readUInt8(index * 8 + 2);
      if (program.readUInt16LE(target * 8) === 0x06) answers.set(program.readUInt32LE(index * 8 + 4), program.readUInt32LE(target * 8 + 4));
    }
    for (const call of calls) expect(answers.get(call), String(call)).toBe(0x00050026);
  });

  it("has no filter for an architecture it has no table for", () => {
    expect(seccompFilter("ia32")).toBeUndefined();
  });
});
