import { createHash } from "node:crypto";
import { describeValue } from "./describe-value.js";

/** A Lua script and the SHA1 Redis knows it by. Make one per script, once, with {@link script}. */
export interface Script {
  readonly source: string;
  /** Lowercase hex SHA1 of `source` (UTF-8), as `SCRIPT LOAD` would return it. */
  readonly sha: string;
}

/** Wraps Lua source for {@link ScriptClient.run}, hashing it once. */
export function script(source: string): Script {
  if (typeof source !== "string" || source.trim() === "") {
    throw new TypeError(`script: \`source\` must be a non-empty string of Lua; got ${describeValue(source)}`);
  }
  return Object.freeze({ source, sha: createHash("sha1").update(source, "utf8").digest("hex") });
}
