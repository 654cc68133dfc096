// A module of its own: `lllm serve`'s /mcp handler reads it at start-up, and StdioServerLines (its other reader)
// loads the MCP SDK's schemas, which that handler loads only when a client opens a session.

/** The largest message `lllm mcp serve` reads (the SDK's stdio limit); a bigger one is answered with an error. */
export const MAX_CLIENT_MESSAGE_BYTES = 10 * 1024 * 1024;
