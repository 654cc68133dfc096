import { rmSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/codeaction/index.js";
import { BridgeError } from "../../src/sandbox/index.js";
import { tempDir } from "../helpers/tempTree.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function store(maxMb?: number): ArtifactStore {
  const folder = tempDir("lllm-quota-");
  folders.push(folder);
  return new ArtifactStore(path.join(folder, "artifacts"), maxMb === undefined ? {} : { maxMb });
}

describe("the artifact quota", () => {
  it("refuses what would pass the run's total, naming the key, and stores nothing of it", () => {
    const artifacts = store(1);
    artifacts.putBytes(Buffer.alloc(600_000, 1), { mime: "application/octet-stream", source: "artifacts.put" });
    let refused: unknown;
    try {
      artifacts.putBytes(Buffer.alloc(600_000, 2), { mime: "application/octet-stream", source: "artifacts.put" });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(BridgeError);
    expect((refused as BridgeError).pythonType).toBe("ArtifactQuotaExceeded");
    expect((refused as BridgeError).message).toMatch(/may take 1 MB together.*workspace_size/);
    expect(artifacts.list()).toHaveLength(1);
  });

  it("counts equal content once, and defaults to 256 MB", () => {
    const artifacts = store(1);
    for (let i = 0; i < 5; i++) artifacts.putBytes(Buffer.alloc(600_000, 7), { mime: "application/octet-stream", source: "artifacts.put" });
    expect(artifacts.list()).toHaveLength(1);
    const roomy = store();
    expect(() => roomy.putBytes(Buffer.alloc(5 * 1024 * 1024), { mime: "application/octet-stream", source: "artifacts.put" })).not.toThrow();
  });
});
