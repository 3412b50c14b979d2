import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argumentsFingerprint, canonicalJson } from "../src/index.js";

describe("canonicalJson", () => {
  it("sorts object keys at every depth", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
  });

  it("drops undefined and function members like JSON, and writes null for them in arrays", () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: 1 })).toBe('{"c":1}');
    expect(canonicalJson([undefined, () => 1, 1])).toBe("[null,null,1]");
  });

  it("writes BigInts as strings, Dates through toJSON, non-finite numbers as null", () => {
    expect(canonicalJson({ amount: 10n })).toBe('{"amount":"10"}');
    expect(canonicalJson({ at: new Date("2026-01-01T00:00:00Z") })).toBe('{"at":"2026-01-01T00:00:00.000Z"}');
    expect(canonicalJson([Number.NaN, Number.POSITIVE_INFINITY])).toBe("[null,null]");
  });

  it("survives circular references", () => {
    const args: Record<string, unknown> = { to: "a@example.com" };
    args.self = args;
    expect(canonicalJson(args)).toBe('{"self":"[Circular]","to":"a@example.com"}');
  });

  it("writes a shared (non-circular) object in full each time", () => {
    const shared = { city: "nyc" };
    expect(canonicalJson({ from: shared, to: shared })).toBe('{"from":{"city":"nyc"},"to":{"city":"nyc"}}');
  });

  it("round-trips JSON data and ignores key order (property)", () => {
    const reversedKeys = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reversedKeys);
      if (typeof value === "object" && value !== null) {
        // fromEntries defines own properties, so a "__proto__" key (fast-check makes them) stays a key.
        return Object.fromEntries(Object.keys(value).reverse().map((key) => [key, reversedKeys((value as Record<string, unknown>)[key])]));
      }
      return value;
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reversedKeys(value))).toBe(text);
      }),
    );
  });
});

describe("argumentsFingerprint", () => {
  const email = { to: "a@example.com", subject: "Invoice", body: "Hello", idempotency_key: "k-1" };

  it("is the same for the same arguments in another key order", () => {
    const reordered = { idempotency_key: "k-1", body: "Hello", subject: "Invoice", to: "a@example.com" };
    expect(argumentsFingerprint(reordered, "idempotency_key")).toBe(argumentsFingerprint(email, "idempotency_key"));
  });

  it("ignores the key field, so a retry with the same key and arguments matches", () => {
    expect(argumentsFingerprint({ ...email, idempotency_key: "k-2" }, "idempotency_key")).toBe(argumentsFingerprint(email, "idempotency_key"));
    expect(argumentsFingerprint(email, "idempotency_key")).toBe(argumentsFingerprint({ to: "a@example.com", subject: "Invoice", body: "Hello" }));
  });

  it("differs when any other argument differs", () => {
    const base = argumentsFingerprint(email, "idempotency_key");
    expect(argumentsFingerprint({ ...email, to: "b@example.com" }, "idempotency_key")).not.toBe(base);
    expect(argumentsFingerprint({ ...email, body: "Hello " }, "idempotency_key")).not.toBe(base);
    expect(argumentsFingerprint({ ...email, cc: "c@example.com" }, "idempotency_key")).not.toBe(base);
    // Without omitting, the key itself counts.
    expect(argumentsFingerprint(email)).not.toBe(argumentsFingerprint({ ...email, idempotency_key: "k-2" }));
  });

  it("is 28 hex characters, never the key itself", () => {
    const fingerprint = argumentsFingerprint(email, "idempotency_key");
    expect(fingerprint).toMatch(/^[0-9a-f]{28}$/);
    expect(fingerprint).not.toContain("k-1");
  });

  it("tells distinct JSON argument objects apart (property: no collisions in a sample)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })), { minLength: 2, maxLength: 30, selector: canonicalJson }), (argsList) => {
        const prints = new Set(argsList.map((args) => argumentsFingerprint(args)));
        expect(prints.size).toBe(argsList.length);
      }),
    );
  });

  it("does not recurse forever on an object whose toJSON returns itself or leads back to it", () => {
    const odd = { value: 1, toJSON(): unknown { return this; } };
    expect(canonicalJson({ odd })).toBe('{"odd":{"value":1}}');
    const loop: { next?: unknown; toJSON(): unknown } = { toJSON: () => ({ back: loop }) };
    expect(canonicalJson(loop)).toBe('{"back":"[Circular]"}');
    expect(argumentsFingerprint({ odd })).toMatch(/^[0-9a-f]{28}$/);
  });
});
