/** A cell: a number (rendered with its column's unit) or text ("pending", "n/a"). */
export type Cell = string | number | boolean | null;

export interface Table {
  readonly columns: readonly string[];
  readonly rows: ReadonlyArray<Readonly<Record<string, Cell>>>;
}

/** One target (issue 6, "no slow paths left"), with what this run measured. `met: null` means not measured (pending). */
export interface TargetResult {
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
}

/** What one suite reports: tables for RESULTS.md, raw data for results.json. */
export interface SuiteResult {
  readonly id: string;
  readonly title: string;
  /** How it was measured, in a sentence or two. */
  readonly method: string;
  readonly tables: ReadonlyArray<{ readonly caption?: string; readonly table: Table }>;
  readonly targets: readonly TargetResult[];
  readonly notes: readonly string[];
  readonly data: Readonly<Record<string, unknown>>;
  readonly seconds?: number;
}
