import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

// The parent side of test/helpers/replica.ts: start replicas as child processes and ask them to act.

const REPLICA = fileURLToPath(new URL("./replica.ts", import.meta.url));

export interface Replica {
  readonly pid: number;
  /** The process has exited (killed): a test file that reuses replicas starts another in its place. */
  readonly exited: boolean;
  ask<T = unknown>(op: string, args?: Record<string, unknown>): Promise<T>;
  /** SIGKILL: no cleanup, no lock released (a crashed holder). */
  kill(): Promise<void>;
}

export async function startReplica(): Promise<Replica> {
  const child: ChildProcess = fork(REPLICA, [], {
    execArgv: ["--import", "tsx", "--no-warnings"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 1;
  let exited = false;
  child.on("message", (raw) => {
    const reply = raw as { id: number; result?: unknown; error?: string };
    const entry = waiting.get(reply.id);
    if (entry === undefined) return;
    waiting.delete(reply.id);
    if (reply.error !== undefined) entry.reject(new Error(`replica ${child.pid}: ${reply.error}`));
    else entry.resolve(reply.result);
  });
  const exit = new Promise<void>((resolve) =>
    child.on("exit", () => {
      exited = true;
      for (const entry of waiting.values()) entry.reject(new Error(`replica ${child.pid} exited`));
      waiting.clear();
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    waiting.set(0, { resolve: () => resolve(), reject });
  });
  return {
    pid: child.pid as number,
    get exited() {
      return exited;
    },
    ask<T>(op: string, args: Record<string, unknown> = {}) {
      if (exited) return Promise.reject(new Error(`replica ${child.pid} has exited`));
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, op, ...args });
      });
    },
    async kill() {
      if (!exited) child.kill("SIGKILL");
      await exit;
    },
  };
}

export async function startReplicas(count: number): Promise<Replica[]> {
  return Promise.all(Array.from({ length: count }, () => startReplica()));
}
