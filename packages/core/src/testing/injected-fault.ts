import type { FaultKind } from "./fault-plan.js";

/** What an `InjectedFault` is made of. */
export type InjectedFaultInit = Pick<InjectedFault, "kind" | "ran" | "status" | "code" | "retryAfterMs" | "headers"> & {
  readonly message: string;
};

/**
 * The error an injected fault throws. It looks like what a real client throws for that failure
 * (an HTTP `status`, a system `code`, a `Retry-After` header), so the core's classifier, and
 * yours, see what production would: `transient` 503, `rate_limit` 429, `lost_response`
 * `ECONNRESET`, `permanent` 401, `invalid_arguments` 400. `ran` tells whether fn ran first.
 */
export class InjectedFault extends Error {
  readonly kind: FaultKind;
  readonly status?: number;
  readonly code?: string;
  readonly retryAfterMs?: number;
  /** `rate_limit`: `{ "retry-after": "<seconds>" }`, rounded up to whole seconds as HTTP sends it. */
  readonly headers?: Readonly<Record<string, string>>;
  /** fn ran before the failure (`lost_response`): its side effect happened. */
  readonly ran: boolean;

  constructor(init: InjectedFaultInit) {
    super(init.message);
    this.name = "InjectedFault";
    this.kind = init.kind;
    this.ran = init.ran;
    this.status = init.status;
    this.code = init.code;
    this.retryAfterMs = init.retryAfterMs;
    this.headers = init.headers;
  }
}

/** The fault of each kind that throws: its status or code, and its default message. */
const SHAPES: Partial<Record<FaultKind, { status?: number; code?: string; message: string }>> = {
  transient: { status: 503, message: "503 Service Unavailable (injected fault)" },
  rate_limit: { status: 429, message: "429 Too Many Requests (injected fault)" },
  lost_response: { code: "ECONNRESET", message: "socket hang up: the reply was lost (injected fault)" },
  permanent: { status: 401, message: "401 Unauthorized (injected fault)" },
  invalid_arguments: { status: 400, code: "INVALID_ARGUMENTS", message: "400 Bad Request: invalid arguments (injected fault)" },
};

/** The `InjectedFault` of `kind`; `retryAfterMs` only for `rate_limit`. */
export function injectedFault(kind: FaultKind, message: string | undefined, ran: boolean, retryAfterMs?: number): InjectedFault {
  const shape = SHAPES[kind] ?? { message: `${kind} (injected fault)` };
  const hint =
    kind === "rate_limit" && retryAfterMs !== undefined
      ? { retryAfterMs, headers: { "retry-after": String(Math.ceil(retryAfterMs / 1000)) } }
      : undefined;
  return new InjectedFault({ kind, ran, status: shape.status, code: shape.code, message: message ?? shape.message, ...hint });
}
