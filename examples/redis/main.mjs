// Two replicas of an agent service sharing circuit breakers and idempotency keys through Redis
// (REDIS_URL, default redis://127.0.0.1:6379). Each replica has its own client, stores and plugin.
import { consoleLogger, RetryReflectPlugin } from "@retry-reflect/core";
import { redisStores } from "@retry-reflect/redis";
import { createClient } from "redis";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
// Real replicas share one fixed prefix; this run takes a fresh one, so that each run starts clean.
const prefix = `retry-reflect-example:${Date.now()}:`;

async function startReplica(name) {
  const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
  client.on("error", () => {}); // a failed connect() rejects below
  await client.connect();
  const stores = redisStores({ client, prefix });
  await stores.ready; // the breaker's subscription to the fleet's circuit changes holds
  const log = consoleLogger({ write: (line) => console.log(`[replica ${name}] ${line}`) });
  const plugin = RetryReflectPlugin.create({
    toolEffects: { send_email: "write" },
    idempotency: { store: stores.idempotency },
    circuitBreakerStore: stores.circuitBreaker,
    circuitBreakerThreshold: 3, // 3 failures in a row, on any replica, open the circuit everywhere
    circuitBreakerResetMs: 30_000,
    initialBackoffMs: 100,
    observers: [log],
  });
  const stop = async () => {
    await stores.close();
    await client.quit();
  };
  return { plugin, stop };
}

let a, b;
try {
  a = await startReplica("A");
  b = await startReplica("B");
} catch (error) {
  console.log(`no Redis at ${url} (${error.message}): start one, e.g. docker run -p 6379:6379 redis:7`);
  process.exit(1);
}

// 1. A write the queue delivers twice, once to each replica (each delivery a new agent run): it runs once.
const sent = [];
async function sendEmail({ to }) {
  sent.push(to);
  return { accepted: to };
}
const email = {
  toolName: "send_email",
  namespace: "request/welcome-4711",
  args: { to: "ana@example.com", idempotency_key: "welcome-4711" },
};
const first = await a.plugin.execute({ ...email, scope: "run-on-A" }, sendEmail);
const again = await b.plugin.execute({ ...email, scope: "run-on-B" }, sendEmail);
console.log(`replica A: ${first.status}; replica B: ${again.status}, replayed: ${again.replayed}; emails sent: ${sent.length}`);

// 2. A broken API: replica A's in-place retries open its circuit; replica B does not even call it.
const runs = { A: 0, B: 0 };
const inventoryApi = (replica) => async () => {
  runs[replica] += 1;
  throw Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });
};
await a.plugin.execute({ toolName: "inventory_api", scope: "run-on-A", args: {} }, inventoryApi("A"));
const refused = await b.plugin.execute({ toolName: "inventory_api", scope: "run-on-B", args: {} }, inventoryApi("B"));
console.log(`inventory_api ran ${runs.A} times on replica A, ${runs.B} times on replica B`);
console.log(`replica B: ${refused.status}, circuit ${b.plugin.circuitState("inventory_api")}: ${refused.message.split("\n")[0]}`);

await a.stop();
await b.stop();
