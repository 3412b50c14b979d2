// What the bench and a replica host (replica-host.ts, a child process) say to each other over IPC.
// A request `{ id, op, ...fields }` gets one reply `{ id, result }` or `{ id, error }`; the host's
// first message is `{ id: 0, result: "ready" }`. Times are `process.hrtime` nanoseconds
// (CLOCK_MONOTONIC): comparable across the processes of one machine.
import type { ClientKind } from "./parameters.js";

/** A fleet run's breaker: one `RedisCircuitBreakerStore` per replica on a shared prefix, or the in-memory default. */
export type FleetMode = "redis" | "memory";

export interface HostRequests {
  /** Connects one client per replica, of these kinds; answers the host's PID. */
  readonly connect: { readonly url: string; readonly kinds: readonly ClientKind[] };
  /** Gives every replica a new plugin (and, in "redis" mode, new stores on `prefix`). */
  readonly init: {
    readonly mode: FleetMode;
    readonly prefix: string;
    readonly threshold: number;
    readonly resetMs: number;
    readonly commandTimeoutMs: number;
  };
  /** From `at`, every replica sends waves of `k` concurrent calls until its view of the circuit reads open. */
  readonly run: { readonly at: number; readonly k: number; readonly maxWaves: number };
  /** One more wave per replica, once every replica of the fleet saw the circuit open: nothing may reach the tool. */
  readonly after: { readonly k: number };
  /** Closes the replicas' stores and clients, then the host disconnects (and exits). */
  readonly close: Record<string, never>;
}

export type HostOp = keyof HostRequests;

/** What one replica did in a `run`. */
export interface ReplicaWaves {
  readonly pid: number;
  readonly kind: ClientKind;
  readonly began: number;
  /** When each call reached the tool. */
  readonly starts: number[];
  readonly waves: number;
  readonly sawOpenAt: number;
  readonly open: boolean;
  /** When the replica's plugin emitted `circuit_opened`. */
  readonly opened: number[];
  readonly storeErrors: number;
  /** Outcomes by label: `reflect:<code>`, `failed:<reason>`, `success`. */
  readonly outcomes: Record<string, number>;
}

/** What one replica's wave did in an `after`. */
export interface ReplicaAfter {
  /** Calls that reached the tool. */
  readonly after: number;
  readonly afterOutcomes: Record<string, number>;
}

export interface HostReplies {
  readonly connect: number;
  readonly init: true;
  readonly run: ReplicaWaves[];
  readonly after: ReplicaAfter[];
  readonly close: true;
}

export type HostRequest = { [Op in HostOp]: { readonly id: number; readonly op: Op } & HostRequests[Op] }[HostOp];
export type HostReply = { readonly id: number; readonly result: unknown } | { readonly id: number; readonly error: string };
