import { type BrokenService, startBrokenService } from "./broken-service.js";
import { type EmailService, type LostResponseMode, startEmailService } from "./email-service.js";
import { DEFAULT_FLAKY_FAULTS, type FlakyApiService, type InjectedFault, startFlakyApiService } from "./flaky-api-service.js";
import { type QuotaService, startQuotaService } from "./quota-service.js";
import { type ReportService, startReportService } from "./report-service.js";
import { type ShippingService, startShippingService } from "./shipping-service.js";
import { startWeatherService, type WeatherService } from "./weather-service.js";

export interface ServiceFaults {
  /** Failures the orders API answers before it works. @default two 503s, then a 429 with `Retry-After: 3` */
  readonly flakyFaults?: readonly InjectedFault[];
  /** How the email service loses its first response. @default "timeout" */
  readonly emailLostResponse?: LostResponseMode;
  /** Requests the reporting service holds without ever answering, before it works. @default 1 */
  readonly reportHangs?: number;
  /** How long the shipping API is down from its first request, in ms. @default 10000 */
  readonly shippingOutageMs?: number;
}

/** The shipping API's outage (scenario 8): about 10 s, within the default patience of 15 s. */
export const DEFAULT_SHIPPING_OUTAGE_MS = 10_000;

/** What the services tell the demo as they run. */
export interface ServiceEvents {
  /** A service holds a request on purpose (no answer is coming): virtual time may move on. */
  readonly requestHeld?: () => void;
  /** The scenario's clock, for the services whose faults last a time (the shipping API's outage). @default Date.now */
  readonly now?: () => number;
}

/** Every local service of the demo, each on its own 127.0.0.1 port. */
export interface DemoServices {
  readonly weather: WeatherService;
  readonly flakyApi: FlakyApiService;
  readonly broken: BrokenService;
  readonly email: EmailService;
  readonly quota: QuotaService;
  readonly report: ReportService;
  readonly shipping: ShippingService;
  close(): Promise<void>;
}

export async function startServices(faults: ServiceFaults = {}, events: ServiceEvents = {}): Promise<DemoServices> {
  const [weather, flakyApi, broken, email, quota, report, shipping] = await Promise.all([
    startWeatherService(),
    startFlakyApiService(faults.flakyFaults ?? DEFAULT_FLAKY_FAULTS),
    startBrokenService(),
    startEmailService(faults.emailLostResponse ?? "timeout", events.requestHeld),
    startQuotaService(),
    startReportService(faults.reportHangs ?? 1, events.requestHeld),
    startShippingService(faults.shippingOutageMs ?? DEFAULT_SHIPPING_OUTAGE_MS, events.now ?? Date.now),
  ]);
  return {
    weather,
    flakyApi,
    broken,
    email,
    quota,
    report,
    shipping,
    close: async () => {
      await Promise.all([
        weather.close(),
        flakyApi.close(),
        broken.close(),
        email.close(),
        quota.close(),
        report.close(),
        shipping.close(),
      ]);
    },
  };
}
