import { tool, z } from "lllm";

/** A nested model and a choice: `points` is a list of objects, so strict mode stays off. */
const Point = z.object({ x: z.number(), y: z.number() });

export const draw = tool({
  name: "draw",
  description: "Draw a line through the points",
  parameters: z.object({
    points: z.array(Point),
    color: z.enum(["red", "blue"]),
  }),
  run: ({ points, color }) => `Drew ${(points as unknown[]).length} points in ${color}`,
});
