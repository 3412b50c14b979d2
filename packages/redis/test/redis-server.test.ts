// The test harness itself: a real redis-server that can be paused, stopped and restarted, and that
// never outlives the process that started it.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { startRedis } from "./helpers/redis-server.js";

const redis = await startRedis();
afterAll(() => redis?.stop());

/** Alive and not a zombie (a dead child of a process that is gone may linger as one). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Resolves true when a TCP connection to `port` is refused, false when it is accepted. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.on("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.on("error", () => resolve(true));
  });
}

describe.skipIf(!redis)("startRedis", () => {
  const server = redis as NonNullable<typeof redis>;

  it("starts redis-server on a loopback port and answers commands", async () => {
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(server.version).toMatch(/^Redis server v=\d+\.\d+/);
    expect(running(server.pid)).toBe(true);
    expect(await server.command("PING")).toBe("+PONG\r\n");
    expect(await server.command("CONFIG", "GET", "save")).toBe("*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
    expect(await server.command("CONFIG", "GET", "appendonly")).toBe("*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
  });

  it("pause() makes it answer nothing until resume()", async () => {
    server.pause();
    try {
      await expect(server.command("PING")).rejects.toThrow(/no reply/);
    } finally {
      server.resume();
    }
    expect(await server.command("PING")).toBe("+PONG\r\n");
  });

  it("flushScripts() empties the script cache", async () => {
    const reply = await server.command("SCRIPT", "LOAD", "return 'harness'");
    const sha = /\$40\r\n([0-9a-f]{40})/.exec(reply)?.[1] as string;
    expect(await server.command("SCRIPT", "EXISTS", sha)).toBe("*1\r\n:1\r\n");
    await server.flushScripts();
    expect(await server.command("SCRIPT", "EXISTS", sha)).toBe("*1\r\n:0\r\n");
  });

  it("stop() kills it and waits; restart() starts an empty server on the same port", async () => {
    const { pid, port } = server;
    await server.command("SET", "k", "v");
    server.pause(); // stop() works on a paused server too
    await server.stop();
    expect(running(pid)).toBe(false);
    expect(await refused(port)).toBe(true);
    await server.stop(); // idempotent
    await server.restart();
    expect(server.port).toBe(port);
    expect(server.pid).not.toBe(pid);
    expect(await server.command("GET", "k")).toBe("$-1\r\n");
  });

  it("never outlives its process: killed on a plain exit and when the process is SIGKILLed", async () => {
    const helper = fileURLToPath(new URL("./helpers/redis-server.ts", import.meta.url));
    const program = (ending: string): string =>
      `import { startRedis } from ${JSON.stringify(helper)}; const r = await startRedis(); console.log(r.pid); ${ending}`;
    for (const [ending, kill] of [
      ["process.exit(0);", false],
      ["setInterval(() => {}, 1000);", true],
    ] as const) {
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program(ending)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      await vi.waitFor(() => expect(output).toMatch(/^\d+\n/), { timeout: 10_000, interval: 20 });
      const pid = Number(output.trim());
      if (kill) {
        expect(running(pid)).toBe(true);
        child.kill("SIGKILL"); // no exit hook runs: the watchdog kills the server
      }
      if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once("exit", resolve));
      await vi.waitFor(() => expect(running(pid)).toBe(false), { timeout: 5000, interval: 20 });
    }
  });
});

describe("startRedis without redis-server", () => {
  it("returns undefined with a printed note, or throws when CI=true (a skipped Redis test would hide a failure)", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      vi.stubEnv("CI", "");
      await expect(startRedis({ binary: "/nonexistent/redis-server" })).resolves.toBeUndefined();
      expect(warn.mock.calls[0]?.[0]).toMatch(/^\[redis tests skipped\] \/nonexistent\/redis-server is not installed/);
      vi.stubEnv("CI", "true");
      await expect(startRedis({ binary: "/nonexistent/redis-server" })).rejects.toThrow(/CI=true: Redis tests must not be skipped/);
      if (redis) {
        // Installed but cannot start (a bad option): the same rule, with redis-server's own words.
        await expect(startRedis({ args: ["--no-such-option", "x"] })).rejects.toThrow(/could not start.*exited.*FATAL CONFIG FILE ERROR/s);
        vi.stubEnv("CI", "");
        await expect(startRedis({ args: ["--no-such-option", "x"] })).resolves.toBeUndefined();
        expect(warn.mock.calls.at(-1)?.[0]).toMatch(/could not start/);
      }
    } finally {
      vi.unstubAllEnvs();
      warn.mockRestore();
    }
  });
});
