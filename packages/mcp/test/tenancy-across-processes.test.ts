import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startRedis } from "../../redis/test/helpers/redis-server.js";

const run = promisify(execFile);
const PROCESS = fileURLToPath(new URL("./helpers/transfer-process.ts", import.meta.url));
const redis = await startRedis();
afterAll(() => redis?.stop());

/** One agent process making one transfer for `user`; what its server did. */
async function transferIn(user: string, iban: string): Promise<{ serverCalled: number; text: string }> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "--no-warnings", PROCESS, redis?.url ?? "", "tenancy:", user, iban], {
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
}

describe.skipIf(!redis)("MCP, two processes sharing one Redis, derived write keys, the adapter's default scope", () => {
  it("each process's user gets their own transfer: no process replays another's result", async () => {
    const alice = await transferIn("alice", "IBAN-ALICE");
    const bob = await transferIn("bob", "IBAN-BOB"); // a second process, or the first one restarted
    expect(alice).toEqual({ serverCalled: 1, text: "receipt of alice: 100 to IBAN-SHOP from IBAN-ALICE" });
    // Before: both processes' default scope was "mcp-client-1", so Bob's write was "replayed" with
    // Alice's receipt (her IBAN in his text) and his server never ran it.
    expect(bob).toEqual({ serverCalled: 1, text: "receipt of bob: 100 to IBAN-SHOP from IBAN-BOB" });
  }, 120_000);
});
