import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis } from "../../../packages/redis/test/helpers/redis-server.js";
import { CliError, parseArgs, REDIS_SCENARIO } from "../src/cli/parse-args.js";
import { runCli } from "../src/cli/run-cli.js";
import { createStyle } from "../src/output/style.js";
import { agentEngine } from "../src/runner/agent-engine.js";
import { coreEngine } from "../src/runner/core-engine.js";
import { type DemoResult, planScenarios, runDemo } from "../src/runner/run-demo.js";
import type { ReplicasScenarioResult } from "../src/runner/run-replicas-scenario.js";
import type { TurnEngine } from "../src/runner/turn-engine.js";
import { createVirtualClock } from "../src/runner/virtual-clock.js";
import { REPLICAS_SCENARIO_ID, REPLICAS_THRESHOLD, WELCOME_EMAIL } from "../src/scenarios/replicas-scenario.js";

// Scenario 8 (two replicas share one Redis) against a real redis-server started here; without
// redis-server on PATH these tests are skipped with a note (under CI=true they fail instead).
const redis = await startRedis();
afterAll(() => redis?.stop());

function cli(argv: string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const done = runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line), env, isTTY: false });
  return { out, err, done };
}

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `lines`, each found after the one before (other lines may come in between). */
function expectInOrder(lines: readonly string[], expected: readonly (string | RegExp)[]): void {
  let from = 0;
  for (const wanted of expected) {
    const index = lines.findIndex((line, at) => at >= from && (typeof wanted === "string" ? line === wanted : wanted.test(line)));
    expect(index, `missing or out of order: ${String(wanted)}`).toBeGreaterThanOrEqual(from);
    from = index + 1;
  }
}

describe("without REDIS_URL", () => {
  it("plays the seven scenarios as before, then says that scenario 8 was skipped and how to play it", async () => {
    const run = cli(["--fast"], {});
    expect(await run.done).toBe(0);
    expect(run.out.some((line) => line.startsWith("── Scenario 8"))).toBe(false);
    const header = run.out.findIndex((line) => line.startsWith("#  scenario"));
    const rows = run.out.slice(header + 2, header + 9);
    expect(rows.map((row) => row.split(/\s{2,}/)[0])).toEqual(["1", "2", "3", "4", "5", "6", "7"]);
    expect(rows.every((row) => row.includes("✓"))).toBe(true);
    expect(run.out.slice(header + 9)).toEqual([
      "in place = retries in place (no model call) · dup writes = duplicate writes prevented (guard replays + service dedupes)",
      "",
      "   Scenario 8 (two replicas share one Redis) was skipped: REDIS_URL is not set.",
      "   To play it: docker compose -f packages/redis/compose.yaml up -d (or any Redis 7: redis-server),",
      "   then REDIS_URL=redis://localhost:6379 npm run demo",
      "",
      "All 7 scenarios ended as expected.",
    ]);
  });

  it("plans the seven offline scenarios, and refuses scenario 8 by number with a usage error naming REDIS_URL", async () => {
    expect(REDIS_SCENARIO).toBe(REPLICAS_SCENARIO_ID);
    expect(planScenarios(undefined, undefined).map((entry) => (entry.kind === "offline" ? entry.scenario.id : 8))).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(planScenarios([], "redis://x:1").at(-1)).toEqual({ kind: "replicas" });
    expect(() => planScenarios([8], undefined)).toThrow("needs REDIS_URL");
    expect(() => parseArgs(["--scenario", "8"], {})).toThrow(CliError);
    expect(parseArgs(["--scenario", "8,1"], { REDIS_URL: "redis://localhost:6379" })).toMatchObject({
      scenarios: [8, 1],
      redisUrl: "redis://localhost:6379",
    });
    expect(() => parseArgs([], { REDIS_URL: "localhost:6379" })).toThrow("REDIS_URL: expected a redis:// or rediss:// URL");
    const run = cli(["--scenario", "8"], {});
    expect(await run.done).toBe(2);
    expect(run.err[0]).toMatch(/^demo: --scenario 8: two replicas share one Redis, so it needs REDIS_URL/);
  });
});

describe("REDIS_URL where nothing listens", () => {
  it("fails scenario 8 within seconds, with a message naming REDIS_URL, and exits 1", async () => {
    const port = await closedPort();
    const started = performance.now();
    const run = cli(["--fast", "--scenario", "8"], { REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(await run.done).toBe(1);
    expect(performance.now() - started).toBeLessThan(6_000);
    const message = `could not connect to Redis at REDIS_URL=redis://127.0.0.1:${port} within 3000 ms`;
    expect(run.out.some((line) => line.startsWith(`✗ ${message}`))).toBe(true);
    expect(run.out.some((line) => line.startsWith(`  scenario 8: ${message}`))).toBe(true);
    expect(run.out.some((line) => /^8 {2}two replicas, Redis .*✗ Redis unreachable \(REDIS_URL\)$/.test(line))).toBe(true);
  });
});

const engines: [string, TurnEngine][] = [
  ["createAgent + retryReflectMiddleware", agentEngine],
  ["core plugin.execute loop", coreEngine],
];

describe.skipIf(!redis)("scenario 8 against a real redis-server", () => {
  const prefixes: string[] = [];

  describe.each(engines)("through %s", (_label, engine) => {
    let demo: DemoResult;
    let result: ReplicasScenarioResult;
    let lines: string[];

    beforeAll(async () => {
      lines = [];
      demo = await runDemo({
        sink: (line) => lines.push(line),
        style: createStyle(false),
        clock: createVirtualClock(),
        engine,
        scenarioIds: [8],
        redisUrl: redis?.url,
      });
      result = demo.results[0] as ReplicasScenarioResult;
      prefixes.push(result.facts.prefix);
    });

    it("ends as expected, with its verdict and counts in the summary table", () => {
      expect(result.verdict.problems).toEqual([]);
      expect(demo.ok).toBe(true);
      expect(lines).toContain("The 1 scenario ended as expected.");
      const row = lines.find((line) => line.startsWith("8  two replicas, Redis"));
      expect(row?.split(/\s{2,}/)).toEqual([
        "8",
        "two replicas, Redis",
        "6",
        "10",
        "3",
        "0",
        "1 (open)",
        "1",
        "✓ 1 email from 2 replicas; B failed fast on A's open circuit",
      ]);
    });

    it("(a) delivers the welcome email once: replica B replays replica A's result from Redis without running send_email", () => {
      const { facts, replicas } = result;
      expect(facts.emailsDelivered).toBe(1);
      expect(facts.emailRequests).toBe(1);
      expect(replicas.A.executionsByTool.send_email).toBe(1);
      expect(replicas.B.executionsByTool.send_email).toBeUndefined();
      expect(replicas.A.guardReplays).toBe(0);
      expect(replicas.B.guardReplays).toBe(1);
      const sent = '[Tool Success]: {"id":"msg_1","status":"sent"}';
      expectInOrder(lines, [
        "   — replica A · agent run scenario-8-run-1 · takes the request from the queue —",
        `[Model]: *calls send_email(${JSON.stringify(WELCOME_EMAIL)})*`,
        sent,
        "   — replica B · agent run scenario-8-run-2 · the same request, delivered again —",
        `[Model]: *calls send_email(${JSON.stringify(WELCOME_EMAIL)})*`,
        "    INFO retry_reflect: idempotent replay tool_name=send_email",
        "   (answered from Redis, where replica A stored this key's result: send_email did not run on replica B, and the email service got no request)",
        sent,
        "[Model]: The welcome email is sent to ada@example.com (message msg_1).",
        "   The email service delivered 1 email, in 1 request: replica A's send_email ran once, replica B's never.",
      ]);
    });

    it("(b) opens the circuit on replica A after 5 failures; replica B learns it from Redis and turns its call away without reaching the inventory API", () => {
      const { facts, replicas } = result;
      expect(replicas.A.breakerTransitions).toEqual(["open"]);
      expect(replicas.A.events.find((event) => event.type === "circuit_opened")?.fields).toMatchObject({
        tool_name: "broken_api",
        failures: REPLICAS_THRESHOLD,
      });
      expect(replicas.A.executionsByTool.broken_api).toBe(REPLICAS_THRESHOLD);
      expect(facts.inventoryRequests).toBe(REPLICAS_THRESHOLD);
      expect(facts.bLearnedOpenAfterMs).toBeGreaterThanOrEqual(0);
      // B's call never reached the service: no run of its tool, no request while B handled it.
      expect(replicas.B.executionsByTool.broken_api).toBeUndefined();
      expect(facts.inventoryRequestsFromB).toBe(0);
      expect(replicas.B.callsRejected).toBe(1);
      expect(replicas.B.breakerTransitions).toEqual([]);
      expect(replicas.B.toolResults.at(-1)?.content).toContain('"error_code":"CIRCUIT_OPEN"');
      expectInOrder(lines, [
        "   — replica A · agent run scenario-8-run-4 · the user tries again —",
        "    WARN retry_reflect: circuit breaker opened tool_name=broken_api failures=5 reset_ms=60000",
        /^ {3}Replica B has not called broken_api, yet its view of the circuit already reads open: Redis told it, within \d+ ms/,
        "   — replica B · agent run scenario-8-run-5 · another user asks replica B —",
        /^ {4}WARN retry_reflect: call rejected, circuit open tool_name=broken_api retry_after_ms=\d+$/,
        "   (turned away at once by replica B's own view of the circuit, which Redis had updated: the inventory API never saw this call)",
        "   The inventory API got 5 requests in all: 5 from replica A, 0 from replica B.",
      ]);
      const fromB = lines.slice(lines.indexOf("   — replica B · agent run scenario-8-run-5 · another user asks replica B —"));
      expect(fromB.some((line) => line.startsWith("[Tool Error]"))).toBe(false);
    });

    it("closes its stores and clients, and deletes its keys", async () => {
      expect(result.facts.keysDeleted).toBe(2);
      expect(lines).toContain("   Replicas stopped: stores.close() on both, both Redis clients closed, this run's 2 keys deleted.");
      expect(await redis?.command("KEYS", `${result.facts.prefix}*`)).toBe("*0\r\n");
      // The server sees both replicas' connections (and their subscriptions) go.
      let clients = "";
      for (let tries = 0; tries < 50; tries++) {
        clients = (await redis?.command("CLIENT", "LIST")) ?? "";
        if (!clients.includes("retry-reflect-demo-replica")) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(clients).not.toContain("retry-reflect-demo-replica");
    });
  });

  it("uses a fresh prefix per run", () => {
    expect(prefixes).toHaveLength(2);
    expect(new Set(prefixes).size).toBe(2);
    for (const prefix of prefixes) expect(prefix).toMatch(/^retry-reflect-demo:[0-9a-f]{8}:$/);
  });
});
