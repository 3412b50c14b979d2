import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { consoleLogger, DEFAULT_REFLECTION_PROMPT, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

interface WeatherArgs {
  city: string;
  units: string;
}

function getWeather(args: WeatherArgs) {
  if (args.units !== "celsius" && args.units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
  return { temperature: 22, condition: "sunny" };
}

describe("the seed's reflection transcript", () => {
  it("reflects on kelvin, then the corrected call succeeds at attempt 2", async () => {
    const clock = createFakeClock();
    const events: RetryReflectEvent[] = [];
    const lines: string[] = [];
    const plugin = RetryReflectPlugin.builder()
      .maxRetries(3)
      .initialBackoffMs(500)
      .backoffMultiplier(2.0)
      .clock(clock)
      .observer({ onEvent: (event) => events.push(event) })
      .observer(consoleLogger({ write: (line) => lines.push(line) }))
      .build();

    const first = await plugin.execute(
      { toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, callId: "call_1", scope: "run-42" },
      (args: WeatherArgs) => getWeather(args),
    );
    expect(first.status).toBe("reflect");
    if (first.status !== "reflect") return;
    expect(first.prompt).toBe(
      `The tool 'get_weather' failed with: "Invalid units. Supported: celsius, fahrenheit". Analyze what went wrong and provide corrected arguments.`,
    );
    expect(DEFAULT_REFLECTION_PROMPT).toContain("{tool_name}");
    expect(first.message.startsWith(`${first.prompt}\n\n`)).toBe(true);
    expect(JSON.parse(first.message.slice(first.prompt.length + 2))).toEqual({
      error_code: "INVALID_ARGUMENTS",
      message: "Invalid units. Supported: celsius, fahrenheit",
      recoverable: true,
      suggested_action: "Correct the arguments named in the error and call the tool again.",
      attempt: 1,
      max_retries: 3,
    });

    const second = plugin.execute(
      { toolName: "get_weather", args: { city: "NYC", units: "celsius" }, callId: "call_2", scope: "run-42" },
      (args: WeatherArgs) => getWeather(args),
    );
    await clock.advance(500);
    await expect(second).resolves.toEqual({
      status: "success",
      value: { temperature: 22, condition: "sunny" },
      attempt: 2,
      replayed: false,
    });

    expect(events.map((event) => [event.type, event.fields])).toEqual([
      [
        "retry",
        {
          tool_name: "get_weather",
          attempt: 1,
          max: 3,
          backoff_ms: 500,
          error: "Invalid units. Supported: celsius, fahrenheit",
          error_code: "INVALID_ARGUMENTS",
          mode: "reflect",
        },
      ],
      ["waiting_before_retry", { tool_name: "get_weather", wait_ms: 500 }],
      ["retry_succeeded", { tool_name: "get_weather", attempt: 2 }],
    ]);
    expect(lines).toEqual([
      `WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 max=3 backoff_ms=500 error="Invalid units. Supported: celsius, fahrenheit" error_code=INVALID_ARGUMENTS mode=reflect`,
      "INFO retry_reflect: waiting before retry tool_name=get_weather wait_ms=500",
      "INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2",
    ]);
  });
});
