// Starts a real redis-server for a test file: on a free loopback port, in its own temp dir, with no
// persistence. Test files do
//
//   const redis = await startRedis();
//   afterAll(() => redis?.stop());
//   describe.skipIf(!redis)("...", () => { ... });
//
// Without redis-server (or when it cannot start) startRedis returns undefined and prints a note,
// so a machine without Redis can still run the other tests; with CI=true it throws instead,
// because in CI a skipped Redis test would hide a failure (.ci/run installs redis-server).
//
// A server never outlives its test process: it is killed on exit and on SIGINT/SIGTERM/SIGHUP,
// and a small watchdog process kills it when the test process dies without running any hook
// (SIGKILL, a crashed worker).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface StartRedisOptions {
  /** Extra redis-server arguments, e.g. `["--maxmemory-policy", "allkeys-lru"]`. */
  readonly args?: readonly string[];
  /** How long to wait for the first PONG, per start (default 5000 ms). */
  readonly startTimeoutMs?: number;
  /** The binary (default `redis-server` from PATH). */
  readonly binary?: string;
}

export interface RedisServer {
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  /** The PID of the running server (a new one after `restart()`). */
  readonly pid: number;
  /** `redis-server --version`, e.g. "Redis server v=7.0.15 ...". */
  readonly version: string;
  /**
   * Kills the server by PID (SIGTERM, then SIGKILL after 2 s), waits for it to exit and removes its
   * temp dir. Idempotent; `restart()` may start it again.
   */
  stop(): Promise<void>;
  /** SIGSTOP: the server keeps its connections open but answers nothing (a hung server). */
  pause(): void;
  /** SIGCONT: the server answers again, replies to what it received while paused included. */
  resume(): void;
  /** Stops the server if it runs, and starts it again on the same port: an empty server, no scripts cached. */
  restart(): Promise<void>;
  /** SCRIPT FLUSH, sent over a raw connection: the next EVALSHA gets NOSCRIPT. */
  flushScripts(): Promise<void>;
  /** Sends one command over a raw connection and returns the raw RESP reply text. */
  command(...args: string[]): Promise<string>;
  /** Sends the commands together over one raw connection and returns the raw RESP text of their replies. */
  commands(...commands: string[][]): Promise<string>;
}

const HOST = "127.0.0.1";
const live = new Set<ChildProcess>();
let hooked = false;

function killAllNow(): void {
  for (const child of live) {
    try {
      if (child.pid !== undefined) process.kill(child.pid, "SIGKILL"); // works on a SIGSTOPped process too
    } catch {
      // already gone
    }
  }
  live.clear();
}

function hookProcessExit(): void {
  if (hooked) return;
  hooked = true;
  process.once("exit", killAllNow);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = (): void => {
      killAllNow();
      // Then the signal's default action, unless someone else (vitest) handles it.
      process.off(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

// The watchdog: a detached node process reading PIDs on stdin ("0" when none runs). When its stdin
// closes (the test process is gone, however it died) it kills the last PID, if that PID is still a
// redis-server (so a recycled PID is never hit), and exits.
const WATCHDOG = `
let pid = 0, buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  const lines = buffered.split("\\n");
  buffered = lines.pop();
  for (const line of lines) if (line.trim() !== "") pid = Number(line);
});
const done = () => {
  if (pid > 0) {
    let cmdline = "";
    try { cmdline = require("fs").readFileSync("/proc/" + pid + "/cmdline", "utf8"); } catch {}
    if (cmdline.includes("redis-server")) {
      try { process.kill(pid, "SIGCONT"); } catch {}
      try { process.kill(pid, "SIGKILL"); } catch {}
    }
  }
  process.exit(0);
};
process.stdin.on("end", done);
process.stdin.on("close", done);
process.stdin.on("error", done);
`;

function startWatchdog(): { watch(pid: number): void; end(): void } {
  const child = spawn(process.execPath, ["-e", WATCHDOG], { stdio: ["pipe", "ignore", "ignore"], detached: true });
  child.on("error", () => {});
  child.stdin?.on("error", () => {});
  child.unref();
  // The pipe must not keep the test process alive either.
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return {
    watch(pid) {
      child.stdin?.write(`${pid}\n`);
    },
    end() {
      child.stdin?.end("0\n");
    },
  };
}

export function freePort(): Promise<number> {
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

/**
 * Commands sent together over one fresh TCP connection (so that a `WAIT` counts the writes before
 * it); resolves with the raw text of their replies once each one is complete.
 */
function rawCommands(port: number, commands: readonly (readonly string[])[], timeoutMs = 1000): Promise<string> {
  const names = commands.map((args) => args[0]).join(", ");
  return new Promise((resolve, reject) => {
    const socket = connect({ host: HOST, port });
    let reply = "";
    const finish = (error: Error | undefined, value?: string): void => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value ?? "");
    };
    const timer = setTimeout(() => finish(new Error(`no reply to ${names} within ${timeoutMs} ms`)), timeoutMs);
    socket.setEncoding("utf8");
    socket.on("connect", () => {
      socket.write(
        commands.map((args) => `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join("")}`).join(""),
      );
    });
    socket.on("data", (chunk: string) => {
      reply += chunk;
      if (isComplete(reply, commands.length)) finish(undefined, reply);
    });
    socket.on("error", (error) => finish(error));
    socket.on("close", () => finish(new Error(`connection closed before a reply to ${names}`)));
  });
}

/** One command over a fresh TCP connection; resolves with its raw reply text. */
function rawCommand(port: number, args: readonly string[], timeoutMs = 1000): Promise<string> {
  return rawCommands(port, [args], timeoutMs);
}

/** Whether `text` holds `count` whole RESP2 replies (enough for the simple replies used here). */
function isComplete(text: string, count: number): boolean {
  let index = 0;
  const next = (): boolean => {
    const end = text.indexOf("\r\n", index);
    if (end < 0) return false;
    const type = text[index];
    const header = text.slice(index + 1, end);
    index = end + 2;
    if (type === "$") {
      const length = Number(header);
      if (length < 0) return true;
      if (text.length < index + length + 2) return false;
      index += length + 2;
      return true;
    }
    if (type === "*") {
      const count = Number(header);
      for (let i = 0; i < count; i++) if (!next()) return false;
      return true;
    }
    return true;
  };
  for (let reply = 0; reply < count; reply++) if (!next()) return false;
  return true;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function unavailable(message: string): undefined {
  if (process.env.CI === "true") {
    throw new Error(`${message}. CI=true: Redis tests must not be skipped in CI (.ci/run installs redis-server).`);
  }
  console.warn(`[redis tests skipped] ${message}. Install it (apt-get install -y redis-server) to run them.`);
  return undefined;
}

/**
 * Starts redis-server on a free loopback port. Resolves once it answers PING. Undefined (with a
 * printed note) when redis-server is missing or cannot start; with CI=true, throws instead.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer | undefined> {
  const binary = options.binary ?? "redis-server";
  const startTimeoutMs = options.startTimeoutMs ?? 5000;
  const probe = spawnSync(binary, ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    return unavailable(`${binary} is not installed (${probe.error?.message ?? `exit ${probe.status}`})`);
  }
  const version = probe.stdout.trim();
  hookProcessExit();

  const dir = mkdtempSync(join(tmpdir(), "retry-reflect-redis-"));
  const logFile = join(dir, "redis.log");
  let port = 0;
  let child: ChildProcess | undefined;
  let paused = false;
  let watchdog: ReturnType<typeof startWatchdog> | undefined;

  const spawnServer = async (): Promise<void> => {
    const argv = [
      "--port",
      String(port),
      "--bind",
      HOST,
      "--dir",
      dir,
      "--logfile",
      logFile,
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
      ...(options.args ?? []),
    ];
    // stderr: where redis-server explains a bad option (its log file is not open yet then).
    const started = spawn(binary, argv, { stdio: ["ignore", "ignore", "pipe"] });
    started.on("error", () => {}); // seen below through exitCode / the PING wait
    let stderr = "";
    started.stderr?.setEncoding("utf8");
    started.stderr?.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    (started.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    live.add(started);
    started.once("exit", () => live.delete(started));
    child = started;
    paused = false;
    if (started.pid !== undefined) {
      watchdog ??= startWatchdog();
      watchdog.watch(started.pid);
    }
    const deadline = Date.now() + startTimeoutMs;
    let lastError = "";
    while (Date.now() < deadline) {
      if (exited(started) || started.pid === undefined) break;
      try {
        if ((await rawCommand(port, ["PING"], 500)).startsWith("+PONG")) return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
      await delay(25);
    }
    const log = [stderr.trim(), readLog(logFile)].filter(Boolean).join("\n");
    started.kill("SIGKILL");
    await waitForExit(started, 2000);
    throw new Error(
      `redis-server did not answer PING on ${HOST}:${port} within ${startTimeoutMs} ms` +
        `${exited(started) ? ` (it exited: ${started.exitCode ?? started.signalCode})` : ""}${lastError ? `; last error: ${lastError}` : ""}` +
        `${log ? `\n--- redis-server output ---\n${log}` : ""}`,
    );
  };

  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || exited(running)) return;
    if (paused) {
      running.kill("SIGCONT"); // a stopped process acts on SIGTERM only once continued
      paused = false;
    }
    running.kill("SIGTERM");
    if (!(await waitForExit(running, 2000))) {
      running.kill("SIGKILL");
      await waitForExit(running, 2000);
    }
    live.delete(running);
    watchdog?.watch(0);
  };

  // The port comes from binding port 0; another process may take it before redis-server does,
  // so a failed first start is retried on a new port.
  let startError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    port = await freePort();
    try {
      await spawnServer();
      startError = undefined;
      break;
    } catch (error) {
      startError = error;
    }
  }
  if (startError !== undefined) {
    watchdog?.end();
    rmSync(dir, { recursive: true, force: true });
    return unavailable(`redis-server could not start: ${startError instanceof Error ? startError.message : String(startError)}`);
  }

  const current = (): ChildProcess => {
    if (!child || exited(child)) throw new Error("the redis-server is not running (stopped); call restart() first");
    return child;
  };

  return {
    url: `redis://${HOST}:${port}`,
    port,
    version,
    get pid() {
      return child?.pid ?? 0;
    },
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    pause() {
      current().kill("SIGSTOP");
      paused = true;
    },
    resume() {
      current().kill("SIGCONT");
      paused = false;
    },
    async restart() {
      await stop();
      mkdirSync(dir, { recursive: true });
      await spawnServer();
    },
    async flushScripts() {
      current();
      const reply = await rawCommand(port, ["SCRIPT", "FLUSH"]);
      if (!reply.startsWith("+OK")) throw new Error(`SCRIPT FLUSH replied ${JSON.stringify(reply)}`);
    },
    command(...args: string[]) {
      current();
      return rawCommand(port, args);
    },
    commands(...commands: string[][]) {
      current();
      return rawCommands(port, commands);
    },
  };
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").trim().split("\n").slice(-20).join("\n");
  } catch {
    return "";
  }
}
