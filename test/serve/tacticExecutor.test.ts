import { TaskState } from "@a2a-js/sdk";
import type { ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server";
import { describe, expect, it } from "vitest";
import { ROUTE_REQUEST, TacticExecutor } from "../../src/serve/a2a/TacticExecutor.js";
import type { A2aTasks } from "../../src/serve/a2a/A2aTasks.js";
import type { ServeContext } from "../../src/serve/ServeContext.js";

describe("TacticExecutor", () => {
  it("ends a task that fails unexpectedly as failed, saying it on one line of the server's own, never throwing to the SDK", async () => {
    const warnings: string[] = [];
    // A served tactic whose look-up throws, with a line break in its message.
    const context = { warn: (message: string) => warnings.push(message), models: { get: () => { throw new Error("boom\nlllm: forged"); } } } as unknown as ServeContext;
    const events: Array<{ kind?: string; data?: { status?: { state?: TaskState; message?: { parts: Array<{ content?: { value?: unknown } }> } } } }> = [];
    const bus = { publish: (event: never) => events.push(event) } as unknown as ExecutionEventBus;
    const message = { messageId: "m\nlllm: forged", contextId: "c", taskId: "", role: 1, parts: [{ content: { $case: "text", value: "hi" }, metadata: undefined, filename: "", mediaType: "text/plain" }], metadata: { skill: "shop" }, extensions: [], referenceTaskIds: [] };
    const requestContext = { taskId: "t1", contextId: "c", userMessage: message, task: undefined, request: { metadata: undefined }, context: { state: new Map<string, unknown>([[ROUTE_REQUEST, {}]]) } } as unknown as RequestContext;
    await new TacticExecutor(context, {} as A2aTasks).execute(requestContext, bus);
    const last = events.at(-1)!.data!.status!;
    expect(last.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(last.message!.parts[0]!.content!.value).toBe("internal error: the task failed unexpectedly; see the server's log");
    expect(warnings).toEqual(["an A2A task failed unexpectedly: boom\\nlllm: forged"]);
  });
});
