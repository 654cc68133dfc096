export type { Model, ModelMessage, ModelRequest, ModelResponse, ResponseFormat, ToolCallRequest, ToolSchema, Usage } from "./Model.js";
export { createModel, API_TYPES, INVOKERS, type CreateModelOptions } from "./createModel.js";
export { FallbackModel, fallsBack, type FallbackModelOptions, type FallbackNotice } from "./FallbackModel.js";
export { PriceTable, type ModelPrice } from "./PriceTable.js";
export { OpenAIChatModel } from "./OpenAIChatModel.js";
export { OpenAIResponsesModel } from "./OpenAIResponsesModel.js";
export { DEFAULT_TIMEOUT_MS, type OpenAIEndpoint, type OpenAIModelOptions } from "./OpenAIEndpoint.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./RetryPolicy.js";
export { PROVIDER_ROUTES, type ProviderRoute } from "./providerRoutes.js";
