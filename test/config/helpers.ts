import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { ConfigError } from "../../src/errors.js";

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));

/** Absolute path of a fixture. */
export function fixture(name: string): string {
  return path.join(fixtures, name);
}

/** A fixture's name as messages print it: relative to the working directory (vitest runs in the repo root). */
export function shown(name: string): string {
  return path.relative(process.cwd(), fixture(name));
}

/** The ConfigError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function configError(promise: Promise<unknown>): Promise<ConfigError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

/** The ConfigError `action` throws. */
export function thrownConfigError(action: () => unknown): ConfigError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError, but nothing was thrown");
}
