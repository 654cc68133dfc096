import { cpSync, rmSync } from "node:fs";
import path from "node:path";
import { EXAMPLE } from "./paths.js";
import { tempDir } from "./tempTree.js";

/** A copy of the example weather package (and the search package it depends on), to change and record into. */
export interface WeatherProject {
  /** The copy's root: `weather/` and `search/` are in it. */
  dir: string;
  weather: string;
  /** `weather/tests`: the package's test file and checks. */
  tests: string;
  /** `weather/tests/__cassettes__/weather.test.yaml`. */
  cassettes: string;
}

/**
 * Copy packages-example/weather (with the search package it names as `../search`) into a fresh temp folder, without
 * its recorded cassettes unless `withCassettes`: tests record into the copy, never into the repository.
 */
export function weatherProject(options: { withCassettes?: boolean } = {}): WeatherProject {
  const dir = tempDir("lllm-weather-");
  for (const name of ["weather", "search"]) cpSync(path.join(EXAMPLE, name), path.join(dir, name), { recursive: true });
  const tests = path.join(dir, "weather", "tests");
  if (!options.withCassettes) rmSync(path.join(tests, "__cassettes__"), { recursive: true, force: true });
  return { dir, weather: path.join(dir, "weather"), tests, cassettes: path.join(tests, "__cassettes__", "weather.test.yaml") };
}
