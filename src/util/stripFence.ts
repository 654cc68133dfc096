/**
 * The body of a reply wrapped in one Markdown code fence (```json … ```), else the reply: models and servers
 * without real structured output often fence their JSON even when asked not to.
 */
export function stripFence(text: string): string {
  const match = /^\s*```[A-Za-z]*\s*\n([\s\S]*?)\n?\s*```\s*$/.exec(text);
  return (match ? match[1]! : text).trim();
}
