/** What a read says of one circuit: its state in Redis, the ms left of its open time or probe lease, its failure count. */
export type ReadCircuit = (key: string, state: string, remainingMs: number, failures: number, version: number) => void;

/** Runs the READ script over the circuits of these keys (each with its probe lease, `resetMs`). */
export type RunRead = (keys: readonly string[], resetMs: readonly number[]) => Promise<unknown>;

/**
 * Keys one script reads at most (a resubscribe with more known tools reads them in several). On a
 * cluster, 1: a script's keys must share a slot, and each circuit's key has a hash tag of its own.
 */
export const KEYS_PER_READ = 1_000;

/**
 * The tools this process uses and what Redis said of their circuits. A tool is known once a read
 * of it settled (answered or failed: then the local view stands in, and the next resubscribe reads
 * it again); until then its calls wait for that one read, so a replica that starts after a
 * circuit opened never runs the tool. Keys asked for in the same tick share one script, and calls
 * of a key whose read is in flight share that read.
 */
export class CircuitReads {
  /** Known keys, the least recently learned first, each with its probe lease (`resetMs`); at most `max`. */
  readonly known = new Map<string, number>();
  private readonly inFlight = new Map<string, { settled: Promise<void>; resetMs: number }>();
  private batch: { keys: Map<string, number>; done: Promise<void> } | undefined;

  constructor(
    private readonly run: RunRead,
    private readonly apply: ReadCircuit,
    private readonly max: number,
    private readonly keysPerRead: number = KEYS_PER_READ,
  ) {}

  /** Reads the circuit of `key` (with others asked for in this tick); resolves once it is known. */
  learn(key: string, resetMs: number): Promise<void> {
    const running = this.inFlight.get(key);
    if (running !== undefined) return running.settled;
    if (this.batch === undefined) {
      const keys = new Map<string, number>();
      // A microtask: every call started in this tick joins the batch before its script is sent.
      const done = Promise.resolve().then(() => {
        this.batch = undefined;
        return this.read(keys);
      });
      this.batch = { keys, done };
    }
    this.batch.keys.set(key, resetMs);
    const settled = this.batch.done.finally(() => {
      this.inFlight.delete(key);
      this.remember(key, resetMs);
    });
    this.inFlight.set(key, { settled, resetMs });
    return settled;
  }

  /** Reads every known key and every key being read now (after a (re)subscribe); rejects if any read failed. */
  async relearn(): Promise<void> {
    const keys = new Map(this.known);
    for (const [key, { resetMs }] of this.inFlight) keys.set(key, resetMs);
    await this.read(keys);
  }

  /** One script per `keysPerRead` keys, all sent at once. */
  private async read(keys: Map<string, number>): Promise<void> {
    const entries = [...keys];
    const reads: Promise<void>[] = [];
    for (let start = 0; start < entries.length; start += this.keysPerRead) {
      reads.push(this.readOnce(entries.slice(start, start + this.keysPerRead)));
    }
    await Promise.all(reads);
  }

  private async readOnce(entries: Array<[string, number]>): Promise<void> {
    const names = entries.map(([key]) => key);
    const reply = await this.run(
      names,
      entries.map(([, resetMs]) => resetMs),
    );
    if (!Array.isArray(reply) || reply.length !== 1 + names.length * 3) {
      throw new TypeError(`unexpected reply from Redis: ${JSON.stringify(reply)?.slice(0, 80)}`);
    }
    const version = Number(reply[0]) || 0;
    names.forEach((key, index) => {
      const at = 1 + index * 3;
      this.apply(key, String(reply[at]), Number(reply[at + 1]) || 0, Number(reply[at + 2]) || 0, version);
    });
  }

  private remember(key: string, resetMs: number): void {
    this.known.delete(key);
    this.known.set(key, resetMs);
    if (this.known.size > this.max) this.known.delete(this.known.keys().next().value as string);
  }
}
