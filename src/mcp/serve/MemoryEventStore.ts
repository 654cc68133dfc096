import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How many events one session keeps for clients that reconnect; older ones are dropped. */
export const KEPT_EVENTS = 1000;

/**
 * The events of one HTTP session's SSE streams, kept in memory so that a client whose stream broke can reconnect
 * with `Last-Event-ID` and get what it missed (MCP's resumability). At most `KEPT_EVENTS` events are kept: a
 * client that comes back later than that resumes with a gap, which is what a bounded server can offer.
 */
export class MemoryEventStore implements EventStore {
  readonly #events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  #next = 0;

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    // The stream is in the id, so that an id alone names its stream; the counter orders the events.
    const eventId = `${streamId}_${String(this.#next++).padStart(12, "0")}`;
    this.#events.set(eventId, { streamId, message });
    if (this.#events.size > KEPT_EVENTS) this.#events.delete(this.#events.keys().next().value as string);
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId ?? streamOf(eventId);
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const streamId = this.#events.get(lastEventId)?.streamId ?? streamOf(lastEventId) ?? "";
    let after = false;
    for (const [eventId, event] of this.#events) {
      if (eventId === lastEventId) {
        after = true;
        continue;
      }
      // An id that was dropped already: replay all that is left of its stream.
      if ((after || !this.#events.has(lastEventId)) && event.streamId === streamId && Object.keys(event.message).length > 0) await send(eventId, event.message);
    }
    return streamId;
  }
}

function streamOf(eventId: string): string | undefined {
  const cut = eventId.lastIndexOf("_");
  return cut > 0 ? eventId.slice(0, cut) : undefined;
}
