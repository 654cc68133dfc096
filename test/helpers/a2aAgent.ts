import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AgentCard, TaskState, type AgentSkill, type Message } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";

/** What a test agent does with one message: publish its task's events, given helpers that make them. */
export type A2aAgentBehavior = (turn: A2aTurn) => Promise<void> | void;

/** One message to the test agent, and how to answer it. */
export interface A2aTurn {
  /** The message's text parts joined. */
  text: string;
  /** The skill the message named (`metadata.skill`). */
  skill: string | undefined;
  /** The task this message continues (it was waiting for input), if any. */
  continues: boolean;
  /** A status update, with a message when `text` is given. */
  status(state: TaskState, text?: string): void;
  /** The answer as an artifact (one chunk, or appended to the previous one). */
  artifact(text: string, options?: { append?: boolean; last?: boolean }): void;
  /** Aborted when the client cancels the task. */
  cancelled: AbortSignal;
}

/** A running test agent: its base URL, what it was sent, and how to stop it. */
export interface A2aAgent {
  url: string;
  /** Each message's text, skill and Authorization header, in order. */
  received: Array<{ text: string; skill: string | undefined; authorization: string | undefined }>;
  close(): Promise<void>;
}

/**
 * An A2A agent written with the official SDK (`DefaultRequestHandler`, its in-memory task store, its JSON-RPC
 * transport handler) on node:http, on a free loopback port: the card at `/.well-known/agent-card.json`, JSON-RPC at
 * `/`. `behavior` answers each message; `token` makes it want `Authorization: Bearer <token>` (401 otherwise).
 */
export async function startA2aAgent(options: { name: string; skills: Array<Pick<AgentSkill, "id" | "description">>; behavior: A2aAgentBehavior; token?: string; streaming?: boolean }): Promise<A2aAgent> {
  const received: A2aAgent["received"] = [];
  const cancels = new Map<string, AbortController>();
  const executor: AgentExecutor = {
    execute: async (context: RequestContext, bus: ExecutionEventBus) => {
      const ids = { taskId: context.taskId, contextId: context.contextId };
      const message: Message = context.userMessage;
      const text = message.parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");
      const skill = typeof message.metadata?.skill === "string" ? message.metadata.skill : undefined;
      const headers = context.context.state.get("headers") as Record<string, string | undefined> | undefined;
      received.push({ text, skill, authorization: headers?.authorization });
      bus.publish(AgentEvent.task(context.task ?? { id: ids.taskId, contextId: ids.contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [message], metadata: {} }));
      const cancel = new AbortController();
      cancels.set(ids.taskId, cancel);
      const part = (value: string) => ({ content: { $case: "text" as const, value }, metadata: undefined, filename: "", mediaType: "text/plain" });
      await options.behavior({
        text,
        skill,
        continues: context.task !== undefined,
        cancelled: cancel.signal,
        status: (state, said) => bus.publish(AgentEvent.statusUpdate({ ...ids, status: { state, message: said === undefined ? undefined : { messageId: crypto.randomUUID(), ...ids, role: 2, parts: [part(said)], metadata: {}, extensions: [], referenceTaskIds: [] }, timestamp: new Date().toISOString() }, metadata: {} })),
        artifact: (value, { append = false, last = true } = {}) => bus.publish(AgentEvent.artifactUpdate({ ...ids, artifact: { artifactId: "result", name: "result", description: "", parts: [part(value)], metadata: undefined, extensions: [] }, append, lastChunk: last, metadata: undefined })),
      });
    },
    cancelTask: async (taskId: string, bus: ExecutionEventBus) => {
      cancels.get(taskId)?.abort();
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: "", status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: {} }));
    },
  };
  let base = "";
  const card = (): AgentCard => ({
    name: options.name,
    description: `The test agent ${options.name}.`,
    supportedInterfaces: [{ url: `${base}/`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: options.streaming ?? true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: options.token !== undefined ? { bearer: { scheme: { $case: "httpAuthSecurityScheme", value: { description: "", scheme: "Bearer", bearerFormat: "" } } } } : {},
    securityRequirements: options.token !== undefined ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: options.skills.map((skill) => ({ id: skill.id, name: skill.id, description: skill.description, tags: [], examples: [], inputModes: ["text/plain"], outputModes: ["text/plain"], securityRequirements: [] })),
    signatures: [],
  });
  let handler: DefaultRequestHandler | undefined;
  const server: Server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/.well-known/agent-card.json") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(AgentCard.toJSON(card())));
      return;
    }
    if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
      response.writeHead(401).end();
      return;
    }
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      void (async () => {
        const context = new ServerCallContext({ requestedVersion: "1.0", state: new Map<string, unknown>([["headers", request.headers]]) });
        const answer = await new JsonRpcTransportHandler(handler!).handle(JSON.parse(body) as Record<string, unknown>, context);
        if (typeof answer === "object" && answer !== null && Symbol.asyncIterator in answer) {
          response.writeHead(200, { "content-type": "text/event-stream" });
          for await (const event of answer as AsyncGenerator<unknown>) response.write(`data: ${JSON.stringify(event)}\n\n`);
          response.end();
        } else response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
  return {
    url: base,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
