import type { AgentCard, AgentSkill } from "@a2a-js/sdk";
import { lllmVersion } from "../../store/startRunLog.js";
import { MODEL_IMAGE_TYPES } from "../../providers/imagesForModel.js";
import { takesImages } from "../contentParts.js";
import type { ServedModel } from "../ServedModels.js";

/** Where the JSON-RPC endpoint is, under the server's base URL. */
export const A2A_PATH = "/a2a";

/** The well-known path of the card (A2A 0.3 and 1.0 alike). */
export const AGENT_CARD_PATH = "/.well-known/agent-card.json";

/** What a card is made of: the served tactics, the base URL clients reach, and whether they need the token. */
export interface AgentCardOptions {
  models: ServedModel[];
  /** `http://127.0.0.1:8080`: the JSON-RPC endpoint is `${baseUrl}/a2a`. */
  baseUrl: string;
  /** Clients send the server's bearer token: the card says so (its security scheme). */
  auth: boolean;
}

const TEXT_MODES = ["text/plain"];

/**
 * The agent card of a server (A2A 1.0's `AgentCard`, typed by the SDK): one skill per served tactic (its model id,
 * description, built-in pattern as a tag, input and output modes), the JSON-RPC endpoint in
 * both protocol versions served (1.0, and 0.3 through the SDK's compatibility layer), streaming, and the bearer
 * scheme when the server wants its token. A message names its skill in `metadata.skill`; one served tactic needs none.
 */
export function agentCard(options: AgentCardOptions): AgentCard {
  const { models } = options;
  const url = `${options.baseUrl.replace(/\/+$/, "")}${A2A_PATH}`;
  const only = models.length === 1 ? models[0] : undefined;
  return {
    name: only ? only.id : "lllm",
    description: only ? (only.description ?? `The lllm tactic ${only.id}.`) : `lllm serves ${models.length} tactics, one skill each: ${models.map((model) => model.id).join(", ")}. Name the skill in the message's metadata.skill.`,
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
    ],
    provider: undefined,
    version: lllmVersion(),
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: options.auth ? { bearer: { scheme: { $case: "httpAuthSecurityScheme", value: { description: "The server's token (lllm serve --token-env NAME).", scheme: "Bearer", bearerFormat: "" } } } } : {},
    securityRequirements: options.auth ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: TEXT_MODES,
    defaultOutputModes: TEXT_MODES,
    skills: models.map(skillOf),
    signatures: [],
  };
}

function skillOf(model: ServedModel): AgentSkill {
  const config = model.prepared.tactic.config;
  const structuredInput = config.input !== undefined && config.input.type !== "string";
  const pattern = config.tactic_type ?? "agent";
  // The card is served without the token, to anyone who asks: it says only what the tactic's author wrote for its
  // users (its name and description). No examples: the inputs of its test files are the author's test data, not
  // something published; nor a package's tactic ref as a tag (`pkg.tactics:name` names the server's packages).
  return {
    id: model.id,
    name: config.name ?? model.id,
    description: model.description ?? `The lllm tactic ${model.id}.`,
    tags: pattern.includes(":") ? [] : [pattern],
    examples: [],
    // An agent tactic's agent sees images sent with the text (raw file parts).
    inputModes: [...(structuredInput ? ["application/json"] : TEXT_MODES), ...(takesImages(model) ? MODEL_IMAGE_TYPES : [])],
    outputModes: config.output !== undefined ? ["application/json"] : TEXT_MODES,
    securityRequirements: [],
  };
}

/**
 * The same card in A2A 0.3's shape (`url`, `preferredTransport`, `securitySchemes` by `type`), for clients that ask
 * without an `A2A-Version` header (0.3, as the SDK's own servers answer them).
 */
export function legacyAgentCard(card: AgentCard): Record<string, unknown> {
  const url = card.supportedInterfaces[0]?.url ?? "";
  const bearer = Object.keys(card.securitySchemes).length > 0;
  return {
    protocolVersion: "0.3.0",
    name: card.name,
    description: card.description,
    url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url, transport: "JSONRPC" }],
    version: card.version,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    ...(bearer ? { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "The server's token (lllm serve --token-env NAME)." } }, security: [{ bearer: [] }] } : {}),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map((skill) => ({ id: skill.id, name: skill.name, description: skill.description, tags: skill.tags, examples: skill.examples, inputModes: skill.inputModes, outputModes: skill.outputModes })),
  };
}
