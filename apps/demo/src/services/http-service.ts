import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A local HTTP service listening on 127.0.0.1 on a port the OS picked. */
export interface HttpService {
  /** Base URL, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  /** Stops listening and drops open connections (keep-alive sockets included). */
  close(): Promise<void>;
}

export type RequestHandler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** Starts `handler` on 127.0.0.1, port 0. The request body is read before the handler runs. */
export async function startHttpService(handler: RequestHandler): Promise<HttpService> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      try {
        handler(request, response, Buffer.concat(chunks).toString("utf8"));
      } catch (error) {
        sendJson(response, 500, { error: error instanceof Error ? error.message : String(error) });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  response.end(text);
}

/** Parses a JSON request body; an empty or broken body gives `{}`. */
export function parseJsonBody(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
