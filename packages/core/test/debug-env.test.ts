import { afterEach, describe, expect, it, vi } from "vitest";
import { debugNames } from "../src/events/notifier.js";
import { consoleLogger, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// `DEBUG=retry-reflect` (the Node convention) prints the decisions with no code change: a plugin
// made while it is set gets a console logger, unless it has one already.

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** The lines a plugin made now prints for a call whose tool fails once with a 503, then succeeds. */
async function printed(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}): Promise<string[]> {
  const lines: string[] = [];
  vi.spyOn(console, "warn").mockImplementation((line: string) => void lines.push(line));
  vi.spyOn(console, "info").mockImplementation((line: string) => void lines.push(line));
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, ...options });
  let runs = 0;
  const call = plugin.execute({ toolName: "get_weather", args: {} }, async () => {
    if (++runs === 1) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
    return "sunny";
  });
  await clock.runAll();
  expect((await call).status).toBe("success");
  return lines;
}

describe("DEBUG=retry-reflect", () => {
  it("prints the WARN and INFO lines of each decision, in the documented format", async () => {
    vi.stubEnv("DEBUG", "retry-reflect");
    const lines = await printed();
    expect(lines[0]).toMatch(/^WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 max=3 /);
    expect(lines).toContain("INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2");
  });

  it("prints nothing without DEBUG, or when DEBUG names other things only", async () => {
    vi.stubEnv("DEBUG", undefined);
    expect(await printed()).toEqual([]);
    vi.stubEnv("DEBUG", "express:*,langchain");
    expect(await printed()).toEqual([]);
  });

  it("prints each line once when the plugin has a console logger already", async () => {
    vi.stubEnv("DEBUG", "*");
    const lines = await printed({ observers: [consoleLogger()] });
    expect(lines.filter((line) => line.startsWith("WARN"))).toHaveLength(1);
  });

  it("reads DEBUG as the debug package does: lists, wildcards, exclusions", () => {
    expect(debugNames("retry-reflect", "retry-reflect")).toBe(true);
    expect(debugNames("*", "retry-reflect")).toBe(true);
    expect(debugNames("retry-*", "retry-reflect")).toBe(true);
    expect(debugNames("express:* retry-reflect", "retry-reflect")).toBe(true);
    expect(debugNames("app, retry-reflect", "retry-reflect")).toBe(true);
    expect(debugNames("*,-retry-reflect", "retry-reflect")).toBe(false);
    expect(debugNames("retry-reflect.x", "retry-reflect")).toBe(false);
    expect(debugNames("retry", "retry-reflect")).toBe(false);
    expect(debugNames("", "retry-reflect")).toBe(false);
    expect(debugNames(undefined, "retry-reflect")).toBe(false);
  });
});
