import { afterEach, describe, expect, it } from "vitest";
import { startEmailService } from "../src/services/email-service.js";
import { startFlakyApiService } from "../src/services/flaky-api-service.js";
import type { HttpService } from "../src/services/http-service.js";
import { startReportService } from "../src/services/report-service.js";
import { startShippingService } from "../src/services/shipping-service.js";
import { startWeatherService } from "../src/services/weather-service.js";
import { HttpError } from "../src/tools/http-error.js";
import { ensureOk, requestJson } from "../src/tools/request-json.js";

const running: HttpService[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.close()));
});

describe("weather service", () => {
  it("rejects kelvin with the reference example's message and answers celsius", async () => {
    const weather = await startWeatherService();
    running.push(weather);
    const kelvin = await requestJson(`${weather.url}/weather?city=nyc&units=kelvin`);
    expect(kelvin.status).toBe(400);
    expect(() => ensureOk(kelvin)).toThrow("Invalid units. Supported: celsius, fahrenheit");
    const celsius = await requestJson(`${weather.url}/weather?city=NYC&units=celsius`);
    expect(ensureOk(celsius)).toEqual({ temperature: 22, condition: "sunny" });
  });
});

describe("shipping service", () => {
  it("is down (503) for its outage from the first request, by the clock it is given, then answers the tracking", async () => {
    let now = 1_000;
    const shipping = await startShippingService(10_000, () => now);
    running.push(shipping);
    const track = () => requestJson(`${shipping.url}/orders/1042/tracking`);
    const down = await track();
    expect(down.status).toBe(503);
    expect(() => ensureOk(down)).toThrow("HTTP 503: Service Unavailable: the shipping API is being redeployed");
    now = 10_999;
    expect((await track()).status).toBe(503);
    now = 11_000;
    expect(ensureOk(await track())).toEqual({ order_id: "1042", status: "in transit", carrier: "DHL", eta: "2025-04-09" });
    expect(shipping.stats).toEqual({ requests: 3, failures: 2, downSince: 1_000 });
  });
});

describe("flaky api service", () => {
  it("answers its injected faults in order, with Retry-After on the 429, then works", async () => {
    const api = await startFlakyApiService();
    running.push(api);
    const statuses: number[] = [];
    let retryAfterMs: number | undefined;
    for (let index = 0; index < 4; index++) {
      const response = await requestJson(`${api.url}/api/orders/today`);
      statuses.push(response.status);
      try {
        ensureOk(response);
      } catch (error) {
        if (error instanceof HttpError && error.status === 429) retryAfterMs = error.retryAfterMs;
      }
    }
    expect(statuses).toEqual([503, 503, 429, 200]);
    expect(retryAfterMs).toBe(3000);
  });
});

describe("email service", () => {
  it("sends, loses the first response (the client times out), and answers a repeat of the key without sending again", async () => {
    const email = await startEmailService("timeout");
    running.push(email);
    const send = () =>
      requestJson(`${email.url}/send`, {
        method: "POST",
        body: { to: "a@example.com", subject: "s" },
        headers: { "idempotency-key": "key-12345" },
        timeoutMs: 300,
      });
    await expect(send()).rejects.toMatchObject({ name: "TimeoutError" });
    const repeat = await send();
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(repeat.body).toEqual({ id: "msg_1", status: "sent" });
    expect(email.stats).toEqual({ sent: 1, deduplicated: 1, requests: 2, responsesLost: 1 });
  });

  it("can drop the connection instead (a network error the classifier sees as transient)", async () => {
    const email = await startEmailService("reset");
    running.push(email);
    await expect(
      requestJson(`${email.url}/send`, { method: "POST", body: {}, headers: { "idempotency-key": "key-12345" } }),
    ).rejects.toMatchObject({
      name: "NetworkError",
    });
    expect(email.stats.sent).toBe(1);
  });

  it("sends twice without a key: the duplicate the guard exists to prevent", async () => {
    const email = await startEmailService("none");
    running.push(email);
    for (let index = 0; index < 2; index++) await requestJson(`${email.url}/send`, { method: "POST", body: { to: "a@example.com" } });
    expect(email.stats.sent).toBe(2);
  });
});

describe("report service", () => {
  it("holds its first request (telling onHeld) until the client hangs up, then answers", async () => {
    let held = 0;
    const report = await startReportService(1, () => held++);
    running.push(report);
    const controller = new AbortController();
    const hung = requestJson(`${report.url}/report?period=2025-W14`, { signal: controller.signal });
    while (held === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error("cut off"));
    await expect(hung).rejects.toThrow("cut off");
    const answered = await requestJson(`${report.url}/report?period=2025-W14`);
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ period: "2025-W14", orders: 1284 });
    while (report.stats.abandoned === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(report.stats).toEqual({ requests: 2, hung: 1, abandoned: 1, answered: 1 });
  });
});
