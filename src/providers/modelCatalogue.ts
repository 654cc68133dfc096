import { closest } from "../util/closest.js";
import { PROVIDER_ROUTES, type ProviderRoute } from "./providerRoutes.js";

/** Which provider a price-table model belongs to, by its name. */
const FAMILIES: Array<{ prefix: string; pattern: RegExp }> = [
  { prefix: "openai", pattern: /^(gpt-|o\d|chatgpt-|text-embedding-)/ },
  { prefix: "anthropic", pattern: /^claude-/ },
  { prefix: "gemini", pattern: /^gemini-/ },
  { prefix: "deepseek", pattern: /^deepseek-/ },
];

/** The provider prefix a price-table model belongs to (`claude-haiku-4-5` → `anthropic`), if known. */
export function providerOfModel(name: string): string | undefined {
  return FAMILIES.find((family) => family.pattern.test(name))?.prefix;
}

/**
 * The route of a configured model name and the name without its prefix: its prefix's, or OpenAI's for a bare name;
 * undefined when its first segment is no provider prefix (such a name goes whole to an OpenAI-compatible server).
 */
export function modelRoute(model: string): { route: ProviderRoute; bare: string } | undefined {
  const slash = model.indexOf("/");
  if (slash < 0) return { route: PROVIDER_ROUTES[0]!, bare: model };
  const route = PROVIDER_ROUTES.find((candidate) => candidate.prefix === model.slice(0, slash));
  return route ? { route, bare: model.slice(slash + 1) } : undefined;
}

/** The price table as far as the catalogue reads it (the run store's `PriceTable`), so providers need not import the store. */
export interface KnownModels {
  priceOf(model: string): unknown;
  names(): string[];
  /** The date of the shipped prices, named in the warning. */
  readonly asOf: string;
}

/**
 * A warning for a model name the price table does not price that looks like a typo, naming what it most likely
 * meant: a near miss of a known model of its provider (`gpt-4o-mni`, a typo that would cost a failed paid call), a
 * known model without its provider's prefix (`claude-sonnet-4-5`, which goes to OpenAI's route), or, when `server`
 * (a base URL of the user's: `OPENAI_BASE_URL`, `invoker_config.base_url`) sends names as they are, a prefix close to
 * a known one (`anthropc/…`, which goes whole to that server, unpriced). Not an error: new models appear every week,
 * and a server of the user's may serve any name. Nothing for local servers (Ollama, vLLM, …), `scripted:` models, or
 * a name like no known one.
 */
export function unknownModelWarning(model: string, table: KnownModels, server?: string): string | undefined {
  if (model.startsWith("scripted:") || table.priceOf(model)) return undefined;
  const found = modelRoute(model);
  if (!found) {
    // Without a server of the user's, an unknown prefix is an error (checkModelName), not a warning.
    const prefix = `${model.slice(0, model.indexOf("/"))}/`;
    const near = server === undefined ? [] : closest(prefix, PROVIDER_ROUTES.map((route) => `${route.prefix}/`));
    if (near.length === 0) return undefined;
    const rest = model.slice(prefix.length);
    return `model \`${model}\`: \`${prefix}\` is not a provider prefix lllm knows, so the whole name goes to the server of ${server} and its calls have no price; did you mean ${near.map((name) => `\`${name}${rest}\``).join(", ")}? If the name is right for that server, ignore this (\`prices:\` in the project settings gives it a price).`;
  }
  const names = table.names();
  if (found.route.prefix === "openai") {
    // A model lllm knows from another provider, written without that provider's prefix.
    const maker = names.includes(found.bare) ? providerOfModel(found.bare) : undefined;
    if (maker !== undefined && maker !== "openai") {
      return `model \`${model}\` is ${maker}'s, but without \`${maker}/\` it goes to ${server === undefined ? "OpenAI" : `the server of ${server}`} and its calls have no price; did you mean \`${maker}/${found.bare}\`? If that server serves it under this name, ignore this (\`prices:\` in the project settings gives it a price).`;
    }
  }
  const known = names.filter((name) => providerOfModel(name) === found.route.prefix);
  if (known.length === 0) return undefined;
  // Only a near miss is worth a word: a name like no known one (a private deployment, a test name) is deliberate.
  const near = closest(found.bare, known);
  if (near.length === 0) return undefined;
  const prefix = model.includes("/") ? `${found.route.prefix}/` : "";
  return `model \`${model}\` is not in lllm's model table (prices as of ${table.asOf}); did you mean ${near.map((name) => `\`${prefix}${name}\``).join(", ")}? If the name is right (a new model), ignore this; \`lllm models\` lists the known ones.`;
}
