import { describe, expect, it } from "vitest";
import { detectIsolation } from "../../src/sandbox/index.js";
import { detectGvisor } from "../../src/sandbox/detectGvisor.js";

/**
 * The isolation and security suites skip a backend this machine lacks (a developer's laptop may have neither). In
 * CI that must never happen quietly: .ci/run installs bubblewrap and runsc, and this test fails if they do not work.
 */
describe.runIf(process.env.CI === "true")("CI has every sandbox backend, so no security suite is skipped", () => {
  it("bubblewrap works", async () => {
    const support = await detectIsolation();
    expect(support.reason ?? "").toBe("");
    expect(support.backend).toBe("bwrap");
  });

  it("gVisor (runsc) works", async () => {
    const gvisor = await detectGvisor();
    expect(gvisor.reason ?? "").toBe("");
    expect(gvisor.available).toBe(true);
  });
});
