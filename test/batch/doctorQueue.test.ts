import { afterEach, expect, it, vi } from "vitest";

// doctor probes the sandboxes each time: on a busy machine more than 30 s.
vi.setConfig({ testTimeout: 240_000 });
import { runCli } from "../helpers/runCli.js";
import { describeRedis } from "./queueTestHelpers.js";
import { RedisServer } from "../helpers/redisServer.js";

let redis: RedisServer | undefined;
afterEach(async () => {
  await redis?.stop();
  redis = undefined;
});

describeRedis("lllm doctor --queue", () => {
  it("a Redis that answers is ok; a wrong password is a failure that says how to give it, never printing it", async () => {
    redis = await RedisServer.start({ password: "doctor-redis-pass-0123" });
    const good = await runCli(["doctor", "--queue", redis.url, "--json"], { timeoutMs: 60_000 });
    const goodCheck = (JSON.parse(good.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }).checks.find((check) => check.name.startsWith("redis "));
    expect(goodCheck).toMatchObject({ name: `redis redis://[redacted]@127.0.0.1:${redis.port}`, status: "ok", detail: expect.stringMatching(/^answers PONG/) });

    const wrong = `redis://:not-the-password-0456@127.0.0.1:${redis.port}`;
    const bad = await runCli(["doctor", "--queue", wrong], { timeoutMs: 60_000 });
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stdout).toMatch(/FAIL {2}redis redis:\/\/\[redacted\]@127\.0\.0\.1:\d+ +cannot use it: WRONGPASS/);
    expect(bad.stdout + bad.stderr).not.toContain("not-the-password-0456");
  });
});
