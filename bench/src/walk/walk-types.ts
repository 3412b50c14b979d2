/** How the driver follows the call (driver.ts). */
export type WalkMethod = "breakpoints" | "step";

/** One pause of the stepper: the top frame's script and position (generated code, 0-based). */
export interface Step {
  readonly scriptId: string;
  readonly url: string;
  readonly line: number;
  readonly column: number;
  readonly functionName: string;
  /** Frames on the stack (the synchronous stack: async callers are not in it). */
  readonly depth: number;
}

/** A function of a core or adapter script, with its calls in the window (V8 precise coverage). */
export interface CoveredFunction {
  readonly scriptId: string;
  readonly url: string;
  readonly functionName: string;
  readonly startOffset: number;
  readonly endOffset: number;
  readonly count: number;
  /** Its block ranges (V8 detailed coverage, nested), each with its own count. */
  readonly blocks: readonly { readonly startOffset: number; readonly endOffset: number; readonly count: number }[];
}

/** What the driver recorded between `walkStart` and `walkEnd`. */
export interface WalkRecord {
  readonly steps: readonly Step[];
  /** The generated source of every core and adapter script (as tsx compiled it), by script id. */
  readonly sources: Readonly<Record<string, { readonly url: string; readonly source: string }>>;
  /** Every function of the core and adapter scripts, with its call count in the window. */
  readonly coverage: readonly CoveredFunction[];
  /** Where V8 can pause in each core and adapter script (`Debugger.getPossibleBreakpoints`), 0-based. */
  readonly breakLocations: Readonly<Record<string, readonly { readonly line: number; readonly column: number }[]>>;
  /** Core or adapter scripts first parsed inside the window (their breakpoints came late: steps may be missing). */
  readonly lateScripts: readonly string[];
  /** The step budget ran out before `walkEnd`. */
  readonly truncated: boolean;
}

/** Main thread → driver. */
export type DriverRequest = { readonly type: "arm" } | { readonly type: "quit" };

/** Driver → main thread. */
export type DriverReply =
  | { readonly type: "ready" }
  | { readonly type: "armed" }
  | { readonly type: "walk"; readonly record: WalkRecord }
  | { readonly type: "error"; readonly message: string };
