import { type HttpService, parseJsonBody, sendJson, startHttpService } from "./http-service.js";

/**
 * How the first response is lost after the email was sent:
 * - `"timeout"`: the service never answers; the client gives up on its own timeout.
 * - `"reset"`: the service drops the connection without answering.
 * - `"none"`: every response arrives.
 */
export type LostResponseMode = "timeout" | "reset" | "none";

export interface EmailServiceStats {
  /** Emails actually sent (delivered to the outbox). */
  sent: number;
  /** Requests answered from the service's own `Idempotency-Key` record, without sending again. */
  deduplicated: number;
  requests: number;
  /** Responses lost after the send was committed. */
  responsesLost: number;
}

export interface SentEmail {
  readonly id: string;
  readonly to: string;
  readonly subject: string;
}

export interface EmailService extends HttpService {
  readonly stats: EmailServiceStats;
  readonly outbox: readonly SentEmail[];
}

/**
 * `POST /send` `{to, subject, body}` with an optional `Idempotency-Key` header →
 * `{"id":"msg_1","status":"sent"}`. A key seen before is answered from the stored result
 * (header `Idempotent-Replayed: true`) without sending again. With `loseFirstResponse`, the
 * first send is committed and then its response is lost; `onHeld` is told when a response is
 * held (the demo's virtual time may then move on).
 */
export async function startEmailService(loseFirstResponse: LostResponseMode = "timeout", onHeld?: () => void): Promise<EmailService> {
  const stats: EmailServiceStats = { sent: 0, deduplicated: 0, requests: 0, responsesLost: 0 };
  const outbox: SentEmail[] = [];
  const byKey = new Map<string, { id: string; status: string }>();
  let lossPending = loseFirstResponse !== "none";

  const service = await startHttpService((request, response, body) => {
    stats.requests++;
    if (request.method !== "POST" || request.url !== "/send") return sendJson(response, 404, { error: "No such route" });
    const key = request.headers["idempotency-key"];
    const idempotencyKey = typeof key === "string" && key !== "" ? key : undefined;
    const stored = idempotencyKey ? byKey.get(idempotencyKey) : undefined;
    if (stored) {
      stats.deduplicated++;
      return sendJson(response, 200, stored, { "idempotent-replayed": "true" });
    }
    const fields = parseJsonBody(body);
    const email: SentEmail = { id: `msg_${outbox.length + 1}`, to: String(fields.to ?? ""), subject: String(fields.subject ?? "") };
    outbox.push(email);
    stats.sent++;
    const result = { id: email.id, status: "sent" };
    if (idempotencyKey) byKey.set(idempotencyKey, result);
    if (lossPending) {
      lossPending = false;
      stats.responsesLost++;
      if (loseFirstResponse === "reset") request.socket.destroy();
      // "timeout": hold the response; the client's timeout fires, and closing the service drops the socket.
      onHeld?.();
      return;
    }
    sendJson(response, 200, result);
  });
  return { ...service, stats, outbox };
}
