// Starts a replica host (replica-host.ts) as a child process, as the Redis package's tests fork
// their replicas: `fork(file, { execArgv: ["--import", "tsx"] })`, an IPC channel, stopped by PID.
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { HostOp, HostReplies, HostReply, HostRequests } from "./replica-host-messages.js";

const HOST_FILE = fileURLToPath(new URL("./replica-host.ts", import.meta.url));

/** A child process hosting replicas. */
export interface ReplicaHost {
  readonly pid: number;
  ask<Op extends HostOp>(op: Op, request: HostRequests[Op]): Promise<HostReplies[Op]>;
  /** Asks it to close its replicas' stores and clients, waits for it to exit (SIGKILL by PID after 3 s). */
  end(): Promise<void>;
  /** SIGKILL by PID. */
  kill(): void;
}

/** Resolves once the host has said it is ready; rejects if it exits first. */
export async function startReplicaHost(): Promise<ReplicaHost> {
  const child: ChildProcess = fork(HOST_FILE, [], {
    execArgv: ["--import", "tsx", "--no-warnings"],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2_000);
  });
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.on("exit", (code, signal) => {
      exited = true;
      for (const entry of waiting.values())
        entry.reject(new Error(`fleet process ${child.pid} exited (${signal ?? code}): ${stderr.trim()}`));
      waiting.clear();
      resolve();
    }),
  );
  child.on("error", () => {});
  child.on("message", (raw) => {
    const reply = raw as HostReply;
    const entry = waiting.get(reply.id);
    if (entry === undefined) return;
    waiting.delete(reply.id);
    if ("error" in reply) entry.reject(new Error(`fleet process ${child.pid}: ${reply.error}`));
    else entry.resolve(reply.result);
  });
  await new Promise<unknown>((resolve, reject) => waiting.set(0, { resolve, reject }));
  const kill = () => {
    if (!exited && child.pid !== undefined) {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  const ask = <Op extends HostOp>(op: Op, request: HostRequests[Op]): Promise<HostReplies[Op]> => {
    if (exited) return Promise.reject(new Error(`fleet process ${child.pid} has exited: ${stderr.trim()}`));
    const id = next++;
    return new Promise<HostReplies[Op]>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, op, ...request });
    });
  };
  return {
    pid: child.pid as number,
    ask,
    async end() {
      if (exited) return;
      const timer = setTimeout(kill, 3_000);
      try {
        await ask("close", {});
      } catch {
        kill();
      }
      await exit;
      clearTimeout(timer);
    },
    kill,
  };
}
