import type { Protocol, RouteRequest } from "../Route.js";
import type { ServeContext } from "../ServeContext.js";
import { sendJson } from "../sendJson.js";
import type { A2aServer } from "./a2aServer.js";
import { A2A_PATH, AGENT_CARD_PATH } from "./agentCard.js";

/**
 * A2A (the Agent2Agent protocol) with the official SDK: the agent card at `/.well-known/agent-card.json` (served
 * without the token: it is how a client learns that it needs one) and JSON-RPC at `/a2a`. The SDK loads with the
 * first A2A request: a server nobody asks over A2A never loads it.
 */
export const a2aProtocol: Protocol = (context) => {
  let server: Promise<A2aServer> | undefined;
  const loaded = (): Promise<A2aServer> => (server ??= import("./a2aServer.js").then(({ createA2aServer }) => createA2aServer(context)));
  return [
    { method: "GET", path: AGENT_CARD_PATH, public: true, handle: async (request) => sendJson(request.response, 200, (await loaded()).card(baseUrlOf(request, context), versionOf(request)), { "Cache-Control": "no-cache", Vary: context.publicUrl === undefined ? "A2A-Version, Host" : "A2A-Version" }) },
    { method: "POST", path: A2A_PATH, handle: async (request) => (await loaded()).rpc(request) },
  ];
};

/**
 * The base URL the client reached: `--public-url`, else the request's Host (checked by the server before any route;
 * the card then says `Vary: Host`, so that a cache in front never hands one client a card made for another's Host).
 */
function baseUrlOf(request: RouteRequest, context: ServeContext): string {
  return context.publicUrl ?? `http://${request.request.headers.host ?? "127.0.0.1"}`;
}

function versionOf(request: RouteRequest): string | undefined {
  const header = request.request.headers["a2a-version"];
  return typeof header === "string" && header !== "" ? header : undefined;
}
