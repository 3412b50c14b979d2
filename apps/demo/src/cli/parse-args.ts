/** What the command line asks for. */
export interface CliOptions {
  readonly help: boolean;
  /** Scenario numbers, in the order given. Empty means all. */
  readonly scenarios: readonly number[];
  /** OTLP/HTTP endpoint to export traces to, when tracing is on. */
  readonly otlpEndpoint: string | undefined;
  /** `openai:<model>` for a real model. */
  readonly model: string | undefined;
  /** Virtual time: backoffs and the breaker reset are simulated instead of waited for. */
  readonly fast: boolean;
  /** `"agent"` (LangChain createAgent + middleware) or `"core"` (a plain loop on plugin.execute). */
  readonly engine: "agent" | "core" | undefined;
  /** Which adapter the tool calls go through: `langchain` (all scenarios), `ai-sdk`, `mcp`, `openai-agents` or `mastra` (the eight offline ones). */
  readonly adapter: DemoAdapter;
  /** `true`/`false` to force colours, undefined to follow the terminal. */
  readonly color: boolean | undefined;
  /** `REDIS_URL`: the Redis of scenario 9 (two replicas share it); undefined skips scenario 9. */
  readonly redisUrl: string | undefined;
}

export const ADAPTERS = ["ai-sdk", "mcp", "openai-agents", "mastra", "langchain"] as const;
export type DemoAdapter = (typeof ADAPTERS)[number];

/** `"ai-sdk", "mcp", "openai-agents", "mastra" or "langchain"`, for the usage errors. */
const ADAPTER_CHOICES = `${ADAPTERS.slice(0, -1)
  .map((adapter) => `"${adapter}"`)
  .join(", ")} or "${ADAPTERS.at(-1)}"`;

export const DEFAULT_OTLP_ENDPOINT = "http://localhost:4318";

/** The offline scenarios are numbered 1 to this (`ALL_SCENARIOS.length`). */
export const SCENARIO_COUNT = 8;

/** Scenario 9, two replicas sharing one Redis, is played only when `REDIS_URL` is set. */
export const REDIS_SCENARIO = SCENARIO_COUNT + 1;

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

export const HELP_TEXT = `Usage: npm run demo -- [options]
       node apps/demo/dist/main.js [options]

Plays eight scenarios of retry-reflect offline: a scripted model (no LLM), LangChain tools calling
local HTTP services on 127.0.0.1 with injected faults, and the plugin's WARN/INFO lines. With
REDIS_URL set, a ninth: two replicas of the agent sharing one Redis (@retry-reflect/redis).

Options:
  --scenario N       play only scenario N (1-${SCENARIO_COUNT}, or ${REDIS_SCENARIO} with REDIS_URL); repeat or use a
                     list: --scenario 1,4
  --jaeger [URL]     export traces with OTLP/HTTP to URL (default ${DEFAULT_OTLP_ENDPOINT});
                     also on when OTEL_EXPORTER_OTLP_ENDPOINT is set
  --model openai:M   use a real OpenAI-compatible model M (needs OPENAI_API_KEY, or
                     OPENAI_BASE_URL for Ollama / vLLM); the scripted model is the default
  --fast             virtual time: backoffs and the breaker reset are simulated, not waited for
  --engine E         agent (LangChain createAgent + retryReflectMiddleware, default) or
                     core (a minimal loop on plugin.execute)
  --adapter A        the adapter the tool calls go through: langchain (default: every scenario,
                     with --engine), ai-sdk (generateText + @retry-reflect/ai-sdk, a mock model),
                     mcp (an in-process McpServer + Client, @retry-reflect/mcp), openai-agents
                     (the Agents SDK's run + @retry-reflect/openai-agents, its ScriptedModel) or
                     mastra (a Mastra Agent + @retry-reflect/mastra, a mock model); all but
                     langchain play scenarios 1-${SCENARIO_COUNT}, not ${REDIS_SCENARIO}
  --color, --no-color  force colours on or off (default: on when stdout is a terminal)
  -h, --help         show this help

Scenarios:
  1  reflection: the reference weather example, kelvin -> reflection -> celsius
  2  transient failures (503, 503, 429 + Retry-After) retried in place
  3  circuit breaker (threshold 5): opens, turns a call away with the wait, a waiting call's
     half-open probe closes it
  4  send_email whose first response is lost: exactly one email is sent
  5  non-recoverable QUOTA_EXCEEDED: the model is told to stop
  6  excluded control-flow tool exit_loop: untouched
  7  a hung generate_report call cut off by attemptTimeoutMs, then retried in place
  8  a tool down for 10 s comes back: retried in place within the patience (15 s), the agent
     finishes (the defaults; its waits are simulated)
  ${REDIS_SCENARIO}  two replicas share one Redis: one email sent once, one circuit for both (needs REDIS_URL)

Environment:
  REDIS_URL          a Redis 7 for scenario ${REDIS_SCENARIO}, e.g. redis://localhost:6379
                     (docker compose -f packages/redis/compose.yaml up -d, or redis-server)
  OTEL_EXPORTER_OTLP_ENDPOINT  export traces there (as --jaeger URL)

Exit code: 0 when every scenario ended as expected, 1 otherwise, 2 for a usage error.`;

function parseScenarioList(value: string | undefined, redis: boolean): number[] {
  if (value === undefined || value === "") throw new CliError("--scenario needs a number, e.g. --scenario 3");
  const last = redis ? REDIS_SCENARIO : SCENARIO_COUNT;
  return value.split(",").map((part) => {
    const id = Number(part.trim());
    if (id === REDIS_SCENARIO && !redis)
      throw new CliError(
        `--scenario ${REDIS_SCENARIO}: two replicas share one Redis, so it needs REDIS_URL (e.g. REDIS_URL=redis://localhost:6379; ` +
          "start one with docker compose -f packages/redis/compose.yaml up -d, or redis-server)",
      );
    if (!Number.isInteger(id) || id < 1 || id > last) throw new CliError(`--scenario: expected 1 to ${last}, got "${part}"`);
    return id;
  });
}

function redisUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "redis:" && url.protocol !== "rediss:"))
    throw new CliError(`REDIS_URL: expected a redis:// or rediss:// URL such as redis://localhost:6379, got "${value}"`);
  return value;
}

function httpUrl(option: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
    throw new CliError(`${option}: expected an http(s) URL such as ${DEFAULT_OTLP_ENDPOINT}, got "${value}"`);
  return value;
}

/** Parses `argv` (without node and the script) and the environment. */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  const redisValue = env.REDIS_URL?.trim() || undefined;
  const redis = redisValue === undefined ? undefined : redisUrl(redisValue);
  let help = false;
  const scenarios: number[] = [];
  let jaeger: string | undefined;
  let model: string | undefined;
  let fast = false;
  let engine: "agent" | "core" | undefined;
  let adapter: DemoAdapter = "langchain";
  let color: boolean | undefined;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    const [flag, inline] =
      argument.startsWith("--") && argument.includes("=")
        ? [argument.slice(0, argument.indexOf("=")), argument.slice(argument.indexOf("=") + 1)]
        : [argument, undefined];
    const next = (): string | undefined => inline ?? (argv[index + 1]?.startsWith("-") ? undefined : argv[++index]);
    switch (flag) {
      case "-h":
      case "--help":
        help = true;
        break;
      case "--scenario":
      case "-s":
        scenarios.push(...parseScenarioList(next(), redis !== undefined));
        break;
      case "--jaeger":
        jaeger = httpUrl("--jaeger", next() ?? DEFAULT_OTLP_ENDPOINT);
        break;
      case "--model": {
        const value = next();
        if (!value || !/^openai:.+/.test(value))
          throw new CliError('--model: expected "openai:<model name>", e.g. --model openai:gpt-4o-mini');
        model = value;
        break;
      }
      case "--fast":
        fast = true;
        break;
      case "--engine": {
        const value = next();
        if (value !== "agent" && value !== "core") throw new CliError('--engine: expected "agent" or "core"');
        engine = value;
        break;
      }
      case "--adapter": {
        const value = next();
        if (value === undefined || value === "") throw new CliError(`--adapter needs a value: ${ADAPTER_CHOICES}`);
        if (!(ADAPTERS as readonly string[]).includes(value)) throw new CliError(`--adapter: expected ${ADAPTER_CHOICES}, got "${value}"`);
        adapter = value as DemoAdapter;
        break;
      }
      case "--color":
        color = true;
        break;
      case "--no-color":
        color = false;
        break;
      default:
        throw new CliError(`unknown option "${argument}" (see --help)`);
    }
  }
  if (adapter !== "langchain") {
    if (scenarios.includes(REDIS_SCENARIO))
      throw new CliError(
        `--scenario ${REDIS_SCENARIO}: --adapter ${adapter} plays scenarios 1-${SCENARIO_COUNT}; scenario ${REDIS_SCENARIO} (two replicas share one Redis) needs --adapter langchain`,
      );
    if (engine !== undefined)
      throw new CliError(`--engine ${engine}: only with --adapter langchain (--adapter ${adapter} has its own loop)`);
    if (model !== undefined) throw new CliError(`--model: only with --adapter langchain (--adapter ${adapter} plays the scripted model)`);
  }
  const fromEnvValue = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || undefined;
  const fromEnv = fromEnvValue === undefined ? undefined : httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT", fromEnvValue);
  return { help, scenarios, otlpEndpoint: jaeger ?? fromEnv, model, fast, engine, adapter, color, redisUrl: redis };
}
