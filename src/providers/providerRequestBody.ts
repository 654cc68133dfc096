import type { ModelRequest } from "./Model.js";
import { anthropicRequestBody } from "./anthropicRequestBody.js";
import { geminiRequestBody } from "./geminiRequestBody.js";
import { chatRequestBody } from "./OpenAIChatModel.js";
import { responsesRequestBody } from "./OpenAIResponsesModel.js";
import { PROVIDER_ROUTES, wireModelName } from "./providerRoutes.js";

/**
 * The body the provider of `model` would be sent for `request`, in its own format (what `--dry-run` prints):
 * Anthropic's Messages API for `anthropic/…`, Gemini's `generateContent` for `gemini/…`, else OpenAI's chat completions or Responses API (`api_type`).
 */
export function providerRequestBody(model: string, apiType: string | undefined, request: ModelRequest): unknown {
  const wireModel = wireModelName(model);
  const prefix = model.includes("/") ? model.slice(0, model.indexOf("/")) : "";
  const wire = PROVIDER_ROUTES.find((route) => route.prefix === prefix)?.wire ?? "openai";
  if (wire === "anthropic") return anthropicRequestBody(wireModel, request);
  if (wire === "gemini") return geminiRequestBody(request);
  return apiType === "response" ? responsesRequestBody(wireModel, request) : chatRequestBody(wireModel, request);
}
