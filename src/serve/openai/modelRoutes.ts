import type { Model } from "openai/resources/models";
import { HttpError } from "../HttpError.js";
import type { Protocol } from "../Route.js";
import type { ServedModel } from "../ServedModels.js";
import { sendJson } from "../sendJson.js";

/** `GET /v1/models` and `GET /v1/models/{id}`: each served tactic is a model, owned by lllm. */
export const modelProtocol: Protocol = () => [
  {
    method: "GET",
    path: "/v1/models",
    handle: async (request, context) => sendJson(request.response, 200, { object: "list", data: context.models.list().map(modelObject) }),
  },
  {
    method: "GET",
    path: "/v1/models/{id}",
    handle: async (request, context) => {
      const model = context.models.get(request.params.id!);
      if (!model) throw new HttpError(404, `the model \`${request.params.id}\` does not exist; this server serves: ${context.models.ids.map((id) => `\`${id}\``).join(", ")}`, { code: "model_not_found", param: "model", type: "invalid_request_error" });
      request.setModel(model.id);
      sendJson(request.response, 200, modelObject(model));
    },
  },
];

function modelObject(model: ServedModel): Model {
  return { id: model.id, object: "model", created: model.created, owned_by: "lllm" };
}
