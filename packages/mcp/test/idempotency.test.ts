import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { IDEMPOTENCY_META_KEY, withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, text } from "./helpers.js";

function mailServer(sent: Array<{ to: string; key: unknown }>, failFirst: { left: number }) {
  return connect((server) => {
    server.registerTool(
      "send_email",
      {
        inputSchema: { to: z.string(), body: z.string(), idempotency_key: z.string() },
        annotations: { destructiveHint: true }, // a write: the guard needs a key
      },
      async ({ to }, extra) => {
        if (failFirst.left > 0) {
          failFirst.left -= 1;
          throw new Error("HTTP 503 Service Unavailable");
        }
        sent.push({ to, key: extra._meta?.[IDEMPOTENCY_META_KEY] });
        return text(`sent to ${to}`);
      },
    );
  });
}

describe("a write with an idempotency key", () => {
  it("runs once when the model re-issues it with the same key: the second call is answered from the store", async () => {
    const sent: Array<{ to: string; key: unknown }> = [];
    const { client } = await mailServer(sent, { left: 0 });
    const clock = createFakeClock();
    // One conversation: a client shared by every user replays nothing across calls unless told whose they are.
    const tools = withRetryReflect(client, { clock }, { namespace: "conversation-1" });
    const params = { name: "send_email", arguments: { to: "ana@example.com", body: "Hi", idempotency_key: "mail-1" } };

    const first = await drive(clock, tools.callTool(params));
    const again = await drive(clock, tools.callTool(params));

    expect(firstText(first)).toBe("sent to ana@example.com");
    expect(again).toEqual(first);
    expect(sent).toHaveLength(1);
    // The key reaches the server in `_meta` too, to forward downstream (an Idempotency-Key header).
    expect(sent[0]?.key).toBe("mail-1");
  });

  it("is retried in place after a transient failure (the key makes it safe), and still sends once", async () => {
    const sent: Array<{ to: string; key: unknown }> = [];
    const { client } = await mailServer(sent, { left: 1 });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });

    const result = await drive(
      clock,
      tools.callTool({ name: "send_email", arguments: { to: "ana@example.com", body: "Hi", idempotency_key: "mail-2" } }),
    );

    expect(firstText(result)).toBe("sent to ana@example.com");
    expect(sent).toEqual([{ to: "ana@example.com", key: "mail-2" }]);
    expect(clock.sleeps.filter((ms) => ms > 0)).toEqual([500]);
  });

  it("without a key, is not run: the model is asked for one (IDEMPOTENCY_KEY_REQUIRED)", async () => {
    const sent: Array<{ to: string; key: unknown }> = [];
    const { client } = await mailServer(sent, { left: 0 });
    const clock = createFakeClock();
    const result = await drive(
      clock,
      withRetryReflect(client, { clock }).callTool({ name: "send_email", arguments: { to: "ana@example.com", body: "Hi" } }),
    );
    expect(result.structuredContent).toMatchObject({ error_code: "IDEMPOTENCY_KEY_REQUIRED" });
    expect(sent).toEqual([]);
  });
});
