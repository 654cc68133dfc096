import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The `--package` folders given, or, when none is, the current folder if it is a package (a manifest: lllm.toml,
 * lllm.yaml, or package.json with an `lllm` key): `lllm tools list` inside a package lists that package, as
 * `-p .` would.
 */
export function packagesOrHere(packages: string[] | undefined, cwd = process.cwd()): string[] | undefined {
  if (packages !== undefined && packages.length > 0) return packages;
  return isPackageFolder(cwd) ? [cwd] : packages;
}

function isPackageFolder(dir: string): boolean {
  if (["lllm.toml", "lllm.yaml", "lllm.yml"].some((name) => existsSync(path.join(dir, name)))) return true;
  try {
    const data = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { lllm?: unknown };
    return typeof data === "object" && data !== null && data.lllm !== undefined;
  } catch {
    return false;
  }
}
