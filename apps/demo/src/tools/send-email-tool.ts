import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ensureOk, requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/** Default client timeout of `send_email`, in milliseconds. */
export const DEFAULT_EMAIL_TIMEOUT_MS = 500;

/**
 * `send_email({to, subject, body, idempotency_key})`: a write. The key is forwarded to the
 * email service as the `Idempotency-Key` header, as good tool design recommends
 * (idempotency keys on writes).
 */
export function createSendEmailTool(baseUrl: string, hooks: ToolHooks = {}, timeoutMs = DEFAULT_EMAIL_TIMEOUT_MS) {
  return tool(
    (args, config) =>
      observeExecution(hooks, "send_email", args, async () => {
        const { idempotency_key: idempotencyKey, ...email } = args;
        return ensureOk(
          await requestJson(new URL("/send", baseUrl).toString(), {
            method: "POST",
            body: email,
            headers: { "idempotency-key": idempotencyKey },
            timeoutMs,
            signal: config?.signal,
          }),
        );
      }),
    {
      name: "send_email",
      description:
        "Sends one email. Has a side effect: call it once per email. Always pass an idempotency_key that is " +
        "unique to this email (reuse the same key when you repeat the same email). Returns {id, status}.",
      schema: z.object({
        to: z.string().describe("Recipient address"),
        subject: z.string().describe("Subject line"),
        body: z.string().describe("Plain-text body"),
        idempotency_key: z.string().min(8).describe("Unique key of this email, e.g. weekly-report-2025-w14"),
      }),
      metadata: { effect: "write" },
    },
  );
}
