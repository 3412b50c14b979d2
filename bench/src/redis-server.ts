// The bench's own redis-server: on a free loopback port, in a temp dir, with no persistence, ready
// once it answers PING, stopped by PID. Its own rather than the Redis tests' harness
// (packages/redis/test/helpers/redis-server.ts): a package's tests are not an API the bench may
// import, and the harness does what tests need and a benchmark must not (with CI=true it throws
// instead of reporting "not measured", it prints "[redis tests skipped]", it pauses, restarts and
// flushes servers, it starts a watchdog process that would run beside the measurements).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServer {
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** `redis-server --version`, e.g. "Redis server v=7.0.15 ...". */
  readonly version: string;
  /** SIGTERM by PID (SIGKILL after 2 s), waits for the exit, removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";
/** How long a start waits for the first PONG. */
const START_TIMEOUT_MS = 5_000;
/** Starts tried, each on a new free port: another process may take a port between `listen(0)` and the server's bind. */
const ATTEMPTS = 3;

/**
 * Starts `binary` (default `redis-server` from PATH); undefined when it is not installed or does
 * not answer PING within 5 s in any of 3 starts. The server is killed when this process exits, or
 * receives SIGINT, SIGTERM or SIGHUP, without reaching `stop()`.
 */
export async function startRedisServer(binary = "redis-server"): Promise<RedisServer | undefined> {
  const probe = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 5_000 });
  if (probe.error !== undefined || probe.status !== 0) return undefined;
  const version = probe.stdout.trim();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const server = await startOnce(binary, version, await freePort()).catch(() => undefined);
    if (server !== undefined) return server;
  }
  return undefined;
}

async function startOnce(binary: string, version: string, port: number): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "retry-reflect-bench-redis-"));
  const argv = ["--port", String(port), "--bind", HOST, "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no"];
  const child: ChildProcess = spawn(binary, [...argv, "--loglevel", "warning"], { stdio: ["ignore", "ignore", "ignore"] });
  child.on("error", () => {}); // seen below: no PID, or an exit before the PONG
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const killNow = () => {
    if (child.pid !== undefined && !exited()) {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  const unhook = killOnExit(killNow);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.pid !== undefined && !exited()) {
      process.kill(child.pid, "SIGTERM");
      const timer = setTimeout(killNow, 2_000);
      await exit;
      clearTimeout(timer);
    }
    unhook();
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (child.pid === undefined || !(await answersPing(port))) {
    if (child.pid === undefined || exited() || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer PING on ${HOST}:${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { url: `redis://${HOST}:${port}`, port, pid: child.pid, version, stop };
}

/** Runs `kill` when this process exits or is signalled (then the signal's default action, unless someone else handles it); returns the unhook. */
function killOnExit(kill: () => void): () => void {
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  const onSignal = (signal: NodeJS.Signals) => {
    kill();
    unhook();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const unhook = () => {
    process.off("exit", kill);
    for (const signal of signals) process.off(signal, onSignal);
  };
  process.once("exit", kill);
  for (const signal of signals) process.on(signal, onSignal);
  return unhook;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port from listen(0)"))));
    });
  });
}

/** An inline PING over a fresh TCP connection: true on `+PONG` within `timeoutMs`. */
function answersPing(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    let reply = "";
    const finish = (answered: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on("error", () => finish(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString("utf8");
      if (reply.includes("\r\n")) finish(reply.startsWith("+PONG"));
    });
  });
}
