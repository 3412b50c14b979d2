import { beforeAll, describe, expect, it } from "vitest";
import { ScriptedChatModel } from "../src/model/scripted-chat-model.js";
import { createStyle } from "../src/output/style.js";
import { agentEngine } from "../src/runner/agent-engine.js";
import { coreEngine } from "../src/runner/core-engine.js";
import { type DemoResult, runDemo } from "../src/runner/run-demo.js";
import type { ScenarioResult } from "../src/runner/run-scenario.js";
import { duplicateWritesPrevented } from "../src/runner/scenario-stats.js";
import type { TurnEngine } from "../src/runner/turn-engine.js";
import { createVirtualClock, type VirtualClock } from "../src/runner/virtual-clock.js";

const engines: [string, TurnEngine][] = [
  ["createAgent + retryReflectMiddleware", agentEngine],
  ["core plugin.execute loop", coreEngine],
];

describe.each(engines)("the eight offline scenarios through %s", (_label, engine) => {
  let result: DemoResult;
  let lines: string[];
  let clock: VirtualClock;
  const scenario = (id: number): ScenarioResult => {
    const found = result.results.find((entry) => entry.scenario.id === id);
    if (!found) throw new Error(`scenario ${id} did not run`);
    return found;
  };

  beforeAll(async () => {
    lines = [];
    clock = createVirtualClock();
    result = await runDemo({ sink: (line) => lines.push(line), style: createStyle(false), clock, engine });
  });

  it("ends every scenario as expected and says so under the summary table", () => {
    const problems = result.results.flatMap((entry) => entry.verdict.problems.map((problem) => `${entry.scenario.id}: ${problem}`));
    expect(problems).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.results.map((entry) => entry.scenario.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(lines).toContain("All 8 scenarios ended as expected.");
    expect(lines.some((line) => line.includes("SCRIPTED (no LLM)"))).toBe(true);
  });

  it("1: reproduces the reference weather transcript, with the log lines in between", () => {
    const expected = [
      "[User]: What's the weather in NYC?",
      '[Model]: *calls get_weather({"city":"nyc","units":"kelvin"})*',
      "[Tool Error]: Invalid units. Supported: celsius, fahrenheit",
      '    WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 max=3 backoff_ms=500 error="Invalid units. Supported: celsius, fahrenheit" error_code=INVALID_ARGUMENTS mode=reflect',
      `[Plugin injects]: The tool 'get_weather' failed with: "Invalid units. Supported: celsius, fahrenheit". Analyze what went wrong and provide corrected arguments.`,
      '[Model]: *calls get_weather({"city":"NYC","units":"celsius"})*',
      "    INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2",
      '[Tool Success]: {"temperature":22,"condition":"sunny"}',
    ];
    let from = 0;
    for (const line of expected) {
      const index = lines.indexOf(line, from);
      expect(index, `missing or out of order: ${line}`).toBeGreaterThanOrEqual(from);
      from = index + 1;
    }
    const { stats } = scenario(1);
    expect([stats.toolExecutions, stats.modelCalls, stats.reflections, stats.retriesInPlace]).toEqual([2, 3, 1, 0]);
  });

  it("2: retries 503, 503 and 429 in place, honouring Retry-After, with no extra model call", () => {
    const { stats } = scenario(2);
    expect(stats.modelCalls).toBe(2);
    expect(stats.toolExecutions).toBe(4);
    expect(stats.retriesInPlace).toBe(3);
    expect(stats.reflections).toBe(0);
    const retries = stats.events.filter((event) => event.type === "retry");
    expect(retries.map((event) => [event.fields.error_code, event.fields.backoff_ms])).toEqual([
      ["TRANSIENT", 500],
      ["TRANSIENT", 1000],
      ["RATE_LIMITED", 3000],
    ]);
    expect(clock.sleeps).toEqual(expect.arrayContaining([500, 1000, 3000]));
    expect(stats.finalAnswer).toBe("42 orders came in today.");
  });

  it("3: opens the breaker after 5 failures, turns a call away with the wait, and a call that waits for recovery is the probe that closes it", () => {
    const { stats } = scenario(3);
    expect(stats.breakerTransitions).toEqual(["open", "half-open", "closed"]);
    const opened = stats.events.find((event) => event.type === "circuit_opened");
    expect(opened?.fields).toEqual({ tool_name: "broken_api", failures: 5, reset_ms: 2000 });
    // Run 3 meets the fresh open circuit (2000 ms left, more than its patience of 1000 ms): turned away at once, told the wait.
    expect(stats.callsRejected).toBe(1);
    expect(stats.events.find((event) => event.type === "call_rejected")?.fields).toEqual({ tool_name: "broken_api", retry_after_ms: 2000 });
    // Run 4 meets it 500 ms before its probe is due, within its patience: it waits, is the probe, and closes the circuit.
    expect(stats.waitsForRecovery).toBe(1);
    expect(stats.events.find((event) => event.type === "waiting_for_recovery")?.fields).toEqual({ tool_name: "broken_api", wait_ms: 500 });
    // 4 attempts in run 1, the 5th failure in run 2, nothing while open, the probe in run 4.
    expect(stats.executionsByTool.broken_api).toBe(6);
    expect(stats.modelCalls).toBe(8);
    expect(stats.retriesInPlace).toBe(3);
    // Runs 1, 2 and 3 end with the temporary text and its wait; no text says "do not call".
    expect([stats.temporary, stats.reflections]).toEqual([3, 0]);
    const errors = stats.toolResults.filter((entry) => entry.status === "error").map((entry) => entry.content);
    expect(errors).toHaveLength(3);
    for (const [index, wait] of [4, 2, 2].entries()) {
      expect(errors[index]).toContain(`is temporarily unavailable: `);
      expect(errors[index]).toContain(`It may work again in about ${wait} s: call it again then with the same arguments`);
      expect(errors[index]).toContain('"recoverable":true');
      expect(errors[index]).toContain(`"retry_after_ms":${wait * 1000}`);
      expect(errors[index]).not.toMatch(/do not call/i);
    }
    expect(errors[2]).toContain('"error_code":"CIRCUIT_OPEN"');
    expect(clock.sleeps).toEqual(expect.arrayContaining([1500, 500]));
    expect(stats.finalAnswer).toBe("The east warehouse has 128 items.");
    const expected = [
      "[User]: And now? Any luck with the east warehouse?",
      '[Model]: *calls broken_api({"warehouse":"east"})*',
      "    WARN retry_reflect: call rejected, circuit open tool_name=broken_api retry_after_ms=2000",
      "   (the circuit stays open for another 2000 ms, longer than the call's patience (1000 ms):",
      "    turned away at once, without running the tool; the model is told when it may work again, not to stop)",
      `[Plugin injects]: The tool 'broken_api' is temporarily unavailable: "The circuit breaker of 'broken_api' is open after repeated failures.". It may work again in about 2 s: call it again then with the same arguments (the same idempotency key, if it has one), or tell the user.`,
      '                  {"error_code":"CIRCUIT_OPEN","message":"The circuit breaker of \'broken_api\' is open after repeated failures.","recoverable":true,"suggested_action":"Call \'broken_api\' again with the same arguments after retry_after_ms, or continue without it and tell the user it is unavailable for now.","attempt":1,"max_retries":3,"retry_after_ms":2000}',
      "[Model]: The inventory API is temporarily unavailable (The circuit breaker of 'broken_api' is open after repeated failures); it may work again in about 2 s. Please ask me again then.",
      "   The on-call engineer repairs the inventory API (the breaker is still open).",
      "   The user asks again 1500 ms later: the circuit then lets its probe through in about 500 ms, within the call's patience.",
      "   — agent run scenario-3-run-4 —",
      "[User]: The inventory team says it is fixed. How many items are in the east warehouse?",
      '[Model]: *calls broken_api({"warehouse":"east"})*',
      "    INFO retry_reflect: waiting for recovery tool_name=broken_api wait_ms=500",
      "   (the circuit lets its probe through in 500 ms, within the call's patience (1000 ms): the call waits",
      "    for it instead of failing fast, and is the probe)",
      "    INFO retry_reflect: circuit breaker half-open tool_name=broken_api",
      "    INFO retry_reflect: circuit breaker closed tool_name=broken_api",
      "   (the probe succeeded: the circuit is closed, and the call that waited for it gets the answer)",
      '[Tool Success]: {"items":128,"warehouse":"east"}',
      "[Model]: The east warehouse has 128 items.",
    ];
    const start = lines.indexOf(expected[0] as string);
    expect(start, "scenario 3's third user line").toBeGreaterThan(0);
    expect(lines.slice(start, start + expected.length)).toEqual(expected);
  });

  it("4: sends exactly one email although its first response is lost and the user asks again", () => {
    const { stats } = scenario(4);
    expect(stats.emailsSent).toBe(1);
    expect(stats.executionsByTool.send_email).toBe(2);
    expect(stats.retriesInPlace).toBe(1);
    expect(stats.events.find((event) => event.type === "retry")?.fields).toMatchObject({ error_code: "TIMEOUT", mode: "in_place" });
    expect(stats.serviceDeduplicated).toBe(1);
    expect(stats.guardReplays).toBe(1);
    expect(duplicateWritesPrevented(stats)).toBe(2);
    expect(stats.modelCalls).toBe(4);
    expect(stats.toolResults.map((entry) => entry.content)).toEqual(['{"id":"msg_1","status":"sent"}', '{"id":"msg_1","status":"sent"}']);
  });

  it("5: stops at QUOTA_EXCEEDED without retrying, and the model tells the user", () => {
    const { stats } = scenario(5);
    expect(stats.toolExecutions).toBe(1);
    expect(stats.modelCalls).toBe(2);
    expect(stats.retriesInPlace + stats.reflections).toBe(0);
    expect(stats.toolResults[0]?.status).toBe("error");
    expect(stats.toolResults[0]?.content).toContain("Inform the user and stop.");
    expect(stats.toolResults[0]?.content).toContain('"error_code":"QUOTA_EXCEEDED"');
    expect(stats.finalAnswer).toContain("QUOTA_EXCEEDED");
  });

  it("6: leaves the excluded exit_loop untouched: it runs once and the plugin never sees it", () => {
    const { stats } = scenario(6);
    expect(stats.executionsByTool.exit_loop).toBe(1);
    expect(stats.callsHandledByTool).toEqual({ api_call: 1 });
    expect(stats.events.filter((event) => event.toolName === "exit_loop")).toEqual([]);
    expect(stats.modelCalls).toBe(2);
    expect(stats.toolResults.at(-1)).toEqual({ toolName: "exit_loop", status: "success", content: "Loop ended: orders checked: 42" });
  });

  it("7: cuts the hung generate_report attempt off at its timeout, aborts its signal, and the retry in place answers", () => {
    const expected = [
      "[User]: Can I have the sales report for week 14 of 2025?",
      '[Model]: *calls generate_report({"period":"2025-W14"})*',
      "    WARN retry_reflect: attempt timed out tool_name=generate_report attempt=1 timeout_ms=1000",
      "   (no answer after 1000 ms: the plugin cut attempt 1 off and aborted its context.signal; generate_report stopped and cancelled its request)",
      `    WARN retry_reflect: tool call failed, retrying tool_name=generate_report attempt=1 max=3 backoff_ms=500 error="The tool 'generate_report' did not answer within 1000 ms; the attempt was cut off." error_code=TIMEOUT mode=in_place`,
      "   (TIMEOUT is transient: the same call runs again in place after the 500 ms backoff; the model is not asked)",
      "    INFO retry_reflect: retry succeeded tool_name=generate_report attempt=2",
      "   (attempt 2 answered within 1000 ms: its result goes to the model, which never sees the timeout)",
      '[Tool Success]: {"period":"2025-W14","orders":1284,"revenue_eur":98250,"top_product":"espresso beans"}',
      "[Model]: Week 14 of 2025: 1284 orders, 98250 EUR of revenue; the best seller was espresso beans.",
    ];
    const start = lines.indexOf(expected[0] as string);
    expect(start, "scenario 7's user line").toBeGreaterThan(0);
    // These lines, in this order and nothing in between: the hung attempt is not a [Tool Error] of its own.
    expect(lines.slice(start, start + expected.length)).toEqual(expected);
    const { stats } = scenario(7);
    expect(stats.attemptsTimedOut).toBe(1);
    expect(stats.events.find((event) => event.type === "attempt_timed_out")?.fields).toEqual({
      tool_name: "generate_report",
      attempt: 1,
      timeout_ms: 1000,
    });
    // The hung attempt's context.signal aborted, as the tool saw it, and the tool let its request go.
    expect(stats.signalsAborted).toBe(1);
    expect(stats.executionsByTool.generate_report).toBe(2);
    expect(stats.events.find((event) => event.type === "retry")?.fields).toMatchObject({
      attempt: 1,
      backoff_ms: 500,
      error_code: "TIMEOUT",
      mode: "in_place",
    });
    expect(stats.events.some((event) => event.type === "retry_succeeded" && event.fields.attempt === 2)).toBe(true);
    // The timeout (1000) and the backoff (500) were waited on the clock, and the model was called twice only.
    expect(clock.sleeps).toEqual(expect.arrayContaining([1000, 500]));
    expect(stats.modelCalls).toBe(2);
    expect(stats.retriesInPlace).toBe(1);
    expect(stats.reflections).toBe(0);
    expect(stats.toolResults).toEqual([
      {
        toolName: "generate_report",
        status: "success",
        content: '{"period":"2025-W14","orders":1284,"revenue_eur":98250,"top_product":"espresso beans"}',
      },
    ]);
    expect(stats.finalAnswer).toContain("1284 orders");
  });

  it("8: a tool down for 10 s comes back: retried in place within the patience, with the defaults, and the agent finishes", () => {
    const expected = [
      "[User]: Where is my order 1042?",
      '[Model]: *calls track_order({"order_id":"1042"})*',
      "[Tool Error]: HTTP 503: Service Unavailable: the shipping API is being redeployed",
      '    WARN retry_reflect: tool call failed, retrying tool_name=track_order attempt=1 max=3 backoff_ms=500 error="HTTP 503: Service Unavailable: the shipping API is being redeployed" error_code=TRANSIENT mode=in_place',
      "[Tool Error]: HTTP 503: Service Unavailable: the shipping API is being redeployed",
      '    WARN retry_reflect: tool call failed, retrying tool_name=track_order attempt=2 max=3 backoff_ms=1000 error="HTTP 503: Service Unavailable: the shipping API is being redeployed" error_code=TRANSIENT mode=in_place',
      "[Tool Error]: HTTP 503: Service Unavailable: the shipping API is being redeployed",
      '    WARN retry_reflect: tool call failed, retrying tool_name=track_order attempt=3 max=3 backoff_ms=2000 error="HTTP 503: Service Unavailable: the shipping API is being redeployed" error_code=TRANSIENT mode=in_place',
      "[Tool Error]: HTTP 503: Service Unavailable: the shipping API is being redeployed",
      '    WARN retry_reflect: tool call failed, retrying tool_name=track_order attempt=4 max=3 backoff_ms=4000 error="HTTP 503: Service Unavailable: the shipping API is being redeployed" error_code=TRANSIENT mode=in_place',
      "   (retry 4 in place, past maxRetries=3: the next attempt starts 7.5 s after the call did,",
      "    within its patience of 15 s; the model is not asked)",
      "[Tool Error]: HTTP 503: Service Unavailable: the shipping API is being redeployed",
      '    WARN retry_reflect: tool call failed, retrying tool_name=track_order attempt=5 max=3 backoff_ms=4000 error="HTTP 503: Service Unavailable: the shipping API is being redeployed" error_code=TRANSIENT mode=in_place',
      "   (retry 5 in place, past maxRetries=3: the next attempt starts 11.5 s after the call did (its backoff capped at maxBackoffMs),",
      "    within its patience of 15 s; the model is not asked)",
      "    INFO retry_reflect: retry succeeded tool_name=track_order attempt=6",
      "   (the shipping API came back; attempt 6 answered 11.5 s after the call started:",
      "    the model gets the result, and was never told to stop)",
      '[Tool Success]: {"order_id":"1042","status":"in transit","carrier":"DHL","eta":"2025-04-09"}',
      "[Model]: Your order 1042 is in transit with DHL; it should arrive on 2025-04-09.",
    ];
    const start = lines.indexOf(expected[0] as string);
    expect(start, "scenario 8's user line").toBeGreaterThan(0);
    // These lines, in this order and nothing in between: no text tells the model to stop or to wait.
    expect(lines.slice(start, start + expected.length)).toEqual(expected);
    const { stats } = scenario(8);
    expect(stats.events.filter((event) => event.type === "retry").map((event) => [event.fields.backoff_ms, event.fields.mode])).toEqual([
      [500, "in_place"],
      [1000, "in_place"],
      [2000, "in_place"],
      [4000, "in_place"],
      [4000, "in_place"],
    ]);
    expect([stats.toolExecutions, stats.modelCalls, stats.retriesInPlace, stats.reflections, stats.temporary]).toEqual([6, 2, 5, 0, 0]);
    // The default threshold (10) is above the attempts of one patient call: the breaker never opened.
    expect(stats.breakerTransitions).toEqual([]);
    expect(stats.toolResults).toEqual([
      {
        toolName: "track_order",
        status: "success",
        content: '{"order_id":"1042","status":"in transit","carrier":"DHL","eta":"2025-04-09"}',
      },
    ]);
    expect(clock.sleeps).toEqual(expect.arrayContaining([500, 1000, 2000, 4000, 4000]));
    expect(stats.finalAnswer).toBe("Your order 1042 is in transit with DHL; it should arrive on 2025-04-09.");
  });

  it("prints the summary table with the counts of each scenario", () => {
    const header = lines.findIndex((line) => line.startsWith("#  scenario"));
    expect(header).toBeGreaterThan(0);
    const rows = lines.slice(header + 2, header + 10).map((line) => line.split(/\s{2,}/));
    expect(rows.map((row) => row.slice(0, 9))).toEqual([
      ["1", "reflection (kelvin)", "2", "3", "0", "1", "0", "0", "0"],
      ["2", "transient, in place", "4", "2", "3", "0", "0", "0", "0"],
      ["3", "circuit breaker", "6", "8", "3", "0", "3", "3 (open→half-open→closed)", "0"],
      ["4", "lost email response", "2", "4", "1", "0", "0", "0", "2"],
      ["5", "QUOTA_EXCEEDED", "1", "2", "0", "0", "0", "0", "0"],
      ["6", "excluded exit_loop", "2", "2", "0", "0", "0", "0", "0"],
      ["7", "hung tool, timeout", "2", "2", "1", "0", "0", "0", "0"],
      ["8", "10 s outage", "6", "2", "5", "0", "0", "0", "0"],
    ]);
    expect(rows.every((row) => row[9]?.startsWith("✓"))).toBe(true);
  });
});

describe("a scenario that does not end as expected", () => {
  it("is reported under the table and makes the demo fail", async () => {
    const lines: string[] = [];
    const result = await runDemo({
      sink: (line) => lines.push(line),
      style: createStyle(false),
      clock: createVirtualClock(),
      scenarioIds: [1],
      engine: agentEngine,
      // A "model" that never calls the tool: the weather scenario cannot end as expected.
      model: { label: "lazy test model", create: () => new ScriptedChatModel({ script: () => ({ text: "No idea." }) }) },
    });
    expect(result.ok).toBe(false);
    expect(result.results[0]?.verdict.problems).toContain("reflections: expected 1, got 0");
    expect(lines).toContain("The 1 scenario did not end as expected:");
    expect(lines.some((line) => line.startsWith("1  reflection (kelvin)") && line.includes("✗"))).toBe(true);
  });
});
