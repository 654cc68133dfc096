import type { OciSource } from "../../config/packageSource.js";
import type { LockEntry } from "../../registry/installed/lockFile.js";
import type { Fetched } from "./fetchSource.js";

export async function fetchOci(source: OciSource, locked?: LockEntry): Promise<Fetched> {
  void locked;
  throw new Error(`OCI sources are not built yet: ${source.text}`);
}
