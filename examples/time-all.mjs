// How long each example takes, as a reader runs it: `node examples/time-all.mjs` from the repository
// root, after `npm run build`. The Redis example needs a redis-server (REDIS_URL, default
// redis://127.0.0.1:6379); the OpenTelemetry one finishes without a collector.
import { spawnSync } from "node:child_process";

const hosts = ["langchain", "ai-sdk", "mcp-client", "mcp-server", "openai-agents", "mastra", "otel", "redis"];
for (const host of hosts) {
  const started = Date.now();
  const run = spawnSync(process.execPath, [`examples/${host}/main.mjs`], { stdio: "ignore", timeout: 60_000 });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`${host.padEnd(14)} ${seconds.padStart(5)} s  ${run.status === 0 ? "ok" : `exit ${run.status ?? run.signal}`}`);
}
