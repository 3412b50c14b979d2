// The suite's result when nothing was measured: the core has not landed, or redis-server is not installed.
import type { Cell, SuiteResult } from "../../report-types.js";
import { FLEET_TARGET, ID, REPLICAS, SUCCESS_TARGET, TITLE } from "./parameters.js";

export const NOT_MEASURED = "not measured";
export const INSTALL_NOTE =
  "redis-server is not installed (nor named by `BENCH_REDIS_SERVER`), so nothing in this suite was measured. Install it (`apt-get install -y redis-server`, Redis 7.0 on Debian 12; it does not need to run: the suite starts its own server on a free loopback port and stops it at the end) and run the suite again.";

/** The suite's rows and targets, each `measured` (pending, or not measured and why). */
export function unmeasuredResult(method: string, notes: string[], measured: string): SuiteResult {
  const rows: Record<string, Cell>[] = [
    { measure: "round trips per call", value: measured },
    { measure: "latency of a script call and of a guarded write", value: measured },
    { measure: "healthy call with the Redis breaker store vs in memory", value: measured },
    { measure: `${REPLICAS} replicas calling a dead tool`, value: measured },
  ];
  return {
    id: ID,
    title: TITLE,
    method,
    tables: [{ table: { columns: ["measure", "value"], rows } }],
    targets: [
      { ...SUCCESS_TARGET, measured, met: null },
      { ...FLEET_TARGET, measured, met: null },
    ],
    notes,
    data: { measured: false },
  };
}
