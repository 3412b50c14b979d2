import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One request the receiver got. */
export interface ReceivedRequest {
  readonly path: string;
  readonly contentType: string;
  /** The body as sent over the wire (before any decompression). */
  readonly raw: Buffer;
  /** The body, decompressed. */
  readonly body: Buffer;
}

/**
 * A loopback OTLP/HTTP receiver (what Jaeger listens with on :4318), for tests: it answers
 * `POST /v1/traces` with an empty success response in the request's encoding and keeps every body.
 */
export async function startOtlpReceiver() {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const raw = Buffer.concat(chunks);
      const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
      const contentType = String(request.headers["content-type"] ?? "");
      requests.push({ path: request.url ?? "", contentType, raw, body });
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      if (contentType.startsWith("application/json")) response.writeHead(200, { "content-type": "application/json" }).end("{}");
      else response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
