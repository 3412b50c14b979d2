// A pool of worker processes (one per core) that take jobs one at a time as they free up: a
// grid's task, a load section's fleet. Jobs go out in the order given, so the long ones (fleets)
// first and the short ones (tasks) fill in at the end, and no process idles while another still
// has a queue. The processes are started once for the whole run.
import { fork } from "node:child_process";

/** What the parent sends a worker: a job, or the word to stop. */
type ToWorker<J> = { readonly index: number; readonly job: J } | { readonly stop: true };
/** What a worker sends back: a job's result, or why it failed; and, told to stop, the CPU time it used (µs). */
type FromWorker<R> =
  | { readonly index: number; readonly result: R }
  | { readonly index: number; readonly error: string }
  | { readonly cpuMicros: number };

/**
 * Runs `jobs` in `workers` processes of `script` (started with `argv` and the parent's Node
 * flags; the script calls `serveJobs`), and hands each result to `onResult` with the time its job
 * took, in milliseconds, as its worker saw it from the parent. Resolves with the CPU time the
 * processes used (user and system, s: on a machine shared with other work, the wall time grows and
 * this does not); rejects on the first job that fails.
 */
export async function runPool<J, R>(
  script: string,
  argv: readonly string[],
  jobs: readonly J[],
  workers: number,
  onResult: (job: J, result: R, ms: number) => void,
): Promise<{ cpuSeconds: number }> {
  let next = 0;
  let cpuMicros = 0;
  const count = Math.max(1, Math.min(workers, jobs.length));
  if (jobs.length === 0) return { cpuSeconds: 0 };
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((done, fail) => {
          const child = fork(script, [...argv], { execArgv: process.execArgv });
          let sentAt = 0;
          let current = -1;
          const send = () => {
            if (next >= jobs.length) {
              child.send({ stop: true } satisfies ToWorker<J>);
              return;
            }
            current = next++;
            sentAt = performance.now();
            child.send({ index: current, job: jobs[current] as J } satisfies ToWorker<J>);
          };
          child.on("message", (message: FromWorker<R>) => {
            if ("cpuMicros" in message) {
              cpuMicros += message.cpuMicros;
              return;
            }
            if ("error" in message) {
              child.kill();
              fail(new Error(`job ${message.index} (${JSON.stringify(jobs[message.index])}) failed: ${message.error}`));
              return;
            }
            onResult(jobs[message.index] as J, message.result, performance.now() - sentAt);
            send();
          });
          child.on("error", fail);
          child.on("exit", (code) =>
            code === 0 && current >= 0 && next >= jobs.length
              ? done()
              : fail(new Error(`worker exited with ${code} during job ${current}`)),
          );
          send();
        }),
    ),
  );
  return { cpuSeconds: cpuMicros / 1e6 };
}

/** The worker's side: runs each job it is sent with `handle`, one at a time; told to stop, reports its CPU time and exits. */
export function serveJobs<J, R>(handle: (job: J) => Promise<R>): void {
  let queue = Promise.resolve();
  process.on("message", (message: ToWorker<J>) => {
    queue = queue.then(async () => {
      if ("stop" in message) {
        const { user, system } = process.cpuUsage();
        process.send?.({ cpuMicros: user + system } satisfies FromWorker<R>, () => process.exit(0));
        return;
      }
      try {
        process.send?.({ index: message.index, result: await handle(message.job) } satisfies FromWorker<R>);
      } catch (error) {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        process.send?.({ index: message.index, error: text } satisfies FromWorker<R>);
      }
    });
  });
}
