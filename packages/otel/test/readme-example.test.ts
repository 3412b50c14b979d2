import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJsonTraces, decodeProtobufTraces, type ReceivedSpan } from "./helpers/otlp-decode.js";
import { startOtlpReceiver } from "./helpers/otlp-receiver.js";

// What a user does with this package's README: copy its setup program into a new project, point
// it at a collector, run it with node. The program is read from the README (not copied here); the
// project is a folder of the demo app (git-ignored), from where node resolves the built packages
// (workspace symlinks to their `dist`) and the OpenTelemetry SDK the demo depends on, so nothing is
// installed. A loopback OTLP/HTTP receiver stands where Jaeger's :4318 would be.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const readme = readFileSync(join(root, "packages/otel/README.md"), "utf8");
const scratch = join(root, "apps/demo/.readme-check");
const SHUTDOWN = "await provider.shutdown();";

/** The first ```js block after `heading`. */
function jsBlockAfter(heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, `the README has a "${heading}" section`).toBeGreaterThanOrEqual(0);
  const fence = readme.indexOf("\n```js\n", start);
  expect(fence, `a \`\`\`js block under "${heading}"`).toBeGreaterThan(start);
  const end = readme.indexOf("\n```\n", fence + 6);
  return readme.slice(fence + 7, end + 1);
}

interface Run {
  readonly exitCode: number | null;
  /** False when the process had to be killed: it did not exit by itself. */
  readonly exitedByItself: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly spans: ReceivedSpan[];
  readonly ms: number;
}

let project = "";
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;

beforeAll(async () => {
  for (const name of ["core", "otel"]) {
    expect(existsSync(join(root, "packages", name, "dist/index.js")), `build packages/${name} first (npm test does)`).toBe(true);
  }
  mkdirSync(scratch, { recursive: true });
  project = mkdtempSync(join(scratch, "otel-readme-"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "otel-readme-user", private: true, type: "module" }));
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver?.close();
  if (project !== "") rmSync(project, { recursive: true, force: true });
  // The scratch folder itself stays (git-ignored): another README test may be creating its project in it.
});

/** Runs `program` as `file` with node, exporting to the receiver; returns what reached it. */
async function run(file: string, program: string): Promise<Run> {
  writeFileSync(join(project, file), program);
  const first = receiver.requests.length;
  // The user's environment, without any OTEL_* of the machine's, plus the two the README names.
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("OTEL_") && value !== undefined) env[key] = value;
  env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url.replace(/\/v1\/traces$/, "");
  env.OTEL_SERVICE_NAME = "readme-example";
  const started = Date.now();
  const child = spawn(process.execPath, [file], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, 15_000);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  clearTimeout(timer);
  const spans = receiver.requests
    .slice(first)
    .filter((request) => request.path === "/v1/traces")
    .flatMap((request) =>
      request.contentType.startsWith("application/json") ? decodeJsonTraces(request.body) : decodeProtobufTraces(request.body),
    );
  return { exitCode, exitedByItself: !killed, stdout, stderr, spans, ms: Date.now() - started };
}

describe("the OTel README's setup program", () => {
  it("exports the execute_tool spans of both calls over OTLP/HTTP, and the process exits by itself", async () => {
    const program = jsBlockAfter("## Usage");
    expect(program).toContain(SHUTDOWN);
    const result = await run("tracing.mjs", program);
    console.log(`OTel README program: exited ${result.exitCode} in ${result.ms} ms, ${result.spans.length} spans received`);

    expect(result.exitedByItself, "the program did not exit within 15 s").toBe(true);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("reflect success\n");

    const tools = result.spans.filter((span) => span.name.startsWith("execute_tool "));
    expect(tools.map((span) => [span.name, span.attributes["gen_ai.tool.call.id"], span.attributes["retry_reflect.outcome"]])).toEqual([
      ["execute_tool get_weather", "call_1", "reflect"],
      ["execute_tool get_weather", "call_2", "success"],
    ]);
    const [first, second] = tools;
    expect(first?.events.map((event) => event.name)).toContain("tool call failed, retrying");
    expect(first?.events.find((event) => event.name === "tool call failed, retrying")?.attributes).toMatchObject({
      "gen_ai.tool.name": "get_weather",
      "retry_reflect.attempt": 1,
      "retry_reflect.error_code": "INVALID_ARGUMENTS",
      "retry_reflect.mode": "reflect",
    });
    expect(second?.events.map((event) => event.name)).toContain("retry succeeded");
    // OTEL_SERVICE_NAME reached the resource, as the README says (what Jaeger lists as the service).
    for (const span of tools) expect(span.serviceName).toBe("readme-example");
    expect(tools.every((span) => span.scopeName === "@retry-reflect/otel")).toBe(true);
  }, 30_000);

  it("exports nothing without its shutdown() line, as the README warns", async () => {
    const program = jsBlockAfter("## Usage");
    const result = await run("tracing-no-shutdown.mjs", program.replace(SHUTDOWN, ""));
    expect(result.exitedByItself).toBe(true);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe("reflect success\n");
    expect(result.spans).toEqual([]);
  }, 30_000);
});
