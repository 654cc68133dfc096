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

/** The route of a configured model name: its prefix's, or OpenAI's for a bare name. */
function routeOf(model: string): { route: ProviderRoute; bare: string } | undefined {
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
 * A warning for a model name the price table does not know but that is close to names it knows, for a provider
 * whose models it lists (OpenAI, Anthropic, Gemini, DeepSeek), naming them: `gpt-4o-mni` is most likely a typo that would cost a
 * failed paid call. Not an error: new models appear every week. Nothing for local servers (Ollama, vLLM, …), for
 * `scripted:` models, or when `customServer` (a base URL of the user's) makes any name plausible.
 */
export function unknownModelWarning(model: string, table: KnownModels, customServer = false): string | undefined {
  if (model.startsWith("scripted:") || table.priceOf(model)) return undefined;
  const found = routeOf(model);
  if (!found || (customServer && found.route.prefix === "openai")) return undefined;
  const known = table.names().filter((name) => providerOfModel(name) === found.route.prefix);
  if (known.length === 0) return undefined;
  // Only a near miss is worth a word: a name like no known one (a private deployment, a test name) is deliberate.
  const near = closest(found.bare, known);
  if (near.length === 0) return undefined;
  const prefix = model.includes("/") ? `${found.route.prefix}/` : "";
  return `model \`${model}\` is not in lllm's model table (prices as of ${table.asOf}); did you mean ${near.map((name) => `\`${prefix}${name}\``).join(", ")}? If the name is right (a new model), ignore this; \`lllm models\` lists the known ones.`;
}
