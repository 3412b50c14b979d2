import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArgumentDepthError, MAX_ARGUMENT_DEPTH } from "../src/idempotency/fingerprint.js";
import { argumentsFingerprint, canonicalJson } from "../src/primitives.js";

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
        return Object.fromEntries(
          Object.keys(value)
            .reverse()
            .map((key) => [key, reversedKeys((value as Record<string, unknown>)[key])]),
        );
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
  // A store shared by several processes (Redis) keeps fingerprints written by each: a process of
  // another build must read the same arguments as the same fingerprint (a rolling deploy).
  it("gives the same fingerprints as before (values computed by the previous release's code)", () => {
    expect(argumentsFingerprint({ to: "ada@example.com", subject: "hi", idempotency_key: "k-1" }, "idempotency_key")).toBe(
      "db4b6d2c341deea4",
    );
    expect(
      argumentsFingerprint({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null }, q: 'say "hi"\n', n: Number.NaN, big: 10n, u: undefined, t: true }),
    ).toBe("e71aece587ff4e75");
  });

  it("reads a plain object as the walk reads the same members in an object without a prototype", () => {
    // Any UTF-16 code unit: quotes, backslashes, control characters and lone surrogates included.
    const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) });
    const member = fc.oneof(
      fc.string(),
      text,
      fc.double(),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.bigInt(),
      fc.jsonValue(),
      fc.array(fc.string()),
      fc.date(),
    );
    fc.assert(
      fc.property(fc.dictionary(text, member), fc.option(fc.string(), { nil: undefined }), (plain, omit) => {
        const bare = Object.assign(Object.create(null) as Record<string, unknown>, plain);
        expect(argumentsFingerprint(plain, omit)).toBe(argumentsFingerprint(bare, omit));
      }),
      { numRuns: 500 },
    );
  });

  const email = { to: "a@example.com", subject: "Invoice", body: "Hello", idempotency_key: "k-1" };

  it("is the same for the same arguments in another key order", () => {
    const reordered = { idempotency_key: "k-1", body: "Hello", subject: "Invoice", to: "a@example.com" };
    expect(argumentsFingerprint(reordered, "idempotency_key")).toBe(argumentsFingerprint(email, "idempotency_key"));
  });

  it("ignores the key field, so a retry with the same key and arguments matches", () => {
    expect(argumentsFingerprint({ ...email, idempotency_key: "k-2" }, "idempotency_key")).toBe(
      argumentsFingerprint(email, "idempotency_key"),
    );
    expect(argumentsFingerprint(email, "idempotency_key")).toBe(
      argumentsFingerprint({ to: "a@example.com", subject: "Invoice", body: "Hello" }),
    );
  });

  it("differs when any other argument differs", () => {
    const base = argumentsFingerprint(email, "idempotency_key");
    expect(argumentsFingerprint({ ...email, to: "b@example.com" }, "idempotency_key")).not.toBe(base);
    expect(argumentsFingerprint({ ...email, body: "Hello " }, "idempotency_key")).not.toBe(base);
    expect(argumentsFingerprint({ ...email, cc: "c@example.com" }, "idempotency_key")).not.toBe(base);
    // Without omitting, the key itself counts.
    expect(argumentsFingerprint(email)).not.toBe(argumentsFingerprint({ ...email, idempotency_key: "k-2" }));
  });

  it("is 16 hex characters, never the key itself", () => {
    const fingerprint = argumentsFingerprint(email, "idempotency_key");
    expect(fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint).not.toContain("k-1");
  });

  it("tells distinct JSON argument objects apart (property: no collisions in a sample)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })), {
          minLength: 2,
          maxLength: 30,
          selector: canonicalJson,
        }),
        (argsList) => {
          const prints = new Set(argsList.map((args) => argumentsFingerprint(args)));
          expect(prints.size).toBe(argsList.length);
        },
      ),
    );
  });

  it("does not recurse forever on an object whose toJSON returns itself or leads back to it", () => {
    const odd = {
      value: 1,
      toJSON(): unknown {
        return this;
      },
    };
    expect(canonicalJson({ odd })).toBe('{"odd":{"value":1}}');
    const loop: { next?: unknown; toJSON(): unknown } = { toJSON: () => ({ back: loop }) };
    expect(canonicalJson(loop)).toBe('{"back":"[Circular]"}');
    expect(argumentsFingerprint({ odd })).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("argumentsFingerprint: content and type, not just JSON shape", () => {
  const fingerprint = (value: unknown) => argumentsFingerprint(value);

  it("is stable across processes and releases of the same format: a store shared by replicas compares it", () => {
    const email = { to: "a@example.com", subject: "Invoice", body: "Hello", idempotency_key: "k-1" };
    expect(argumentsFingerprint(email, "idempotency_key")).toBe("07356c246aa1ec33");
    expect(argumentsFingerprint({ ...email, idempotency_key: "k-2" }, "idempotency_key")).toBe("07356c246aa1ec33");
    expect(fingerprint({ b: [1, "x", null, true, { c: -2.5 }], a: {} })).toBe("73ac6f6c683a26b7");
  });

  it("tells Maps apart by their entries, whatever the insertion order", () => {
    const eur = new Map<string, unknown>([
      ["currency", "EUR"],
      ["amount", 10],
    ]);
    expect(fingerprint({ line: eur })).not.toBe(
      fingerprint({
        line: new Map<string, unknown>([
          ["currency", "USD"],
          ["amount", 10],
        ]),
      }),
    );
    expect(fingerprint(eur)).not.toBe(fingerprint(new Map()));
    expect(fingerprint(eur)).toBe(
      fingerprint(
        new Map<string, unknown>([
          ["amount", 10],
          ["currency", "EUR"],
        ]),
      ),
    );
    // A Map is not the plain object with the same members, and its keys keep their type.
    expect(fingerprint(eur)).not.toBe(fingerprint({ currency: "EUR", amount: 10 }));
    expect(fingerprint(new Map([[1, "a"]]))).not.toBe(fingerprint(new Map([["1", "a"]])));
  });

  it("compares Maps with object keys by the keys' content", () => {
    const byUser = (first: number, second: number) =>
      new Map([
        [{ user: first }, "read"],
        [{ user: second }, "write"],
      ]);
    expect(fingerprint(byUser(1, 2))).not.toBe(fingerprint(byUser(1, 3)));
    expect(fingerprint(byUser(1, 2))).not.toBe(fingerprint(byUser(2, 1)));
    expect(fingerprint(byUser(1, 2))).toBe(
      fingerprint(
        new Map([
          [{ user: 2 }, "write"],
          [{ user: 1 }, "read"],
        ]),
      ),
    );
  });

  it("tells Sets apart by their elements, whatever the insertion order", () => {
    expect(fingerprint({ tags: new Set(["a", "b"]) })).not.toBe(fingerprint({ tags: new Set(["a", "c"]) }));
    expect(fingerprint(new Set(["a", "b"]))).toBe(fingerprint(new Set(["b", "a"])));
    expect(fingerprint(new Set([1, 2]))).not.toBe(fingerprint([1, 2]));
    expect(fingerprint(new Set([{ id: 1 }]))).not.toBe(fingerprint(new Set([{ id: 2 }])));
  });

  it("ignores insertion order of Maps and Sets (property)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })), { selector: ([key]) => key, maxLength: 12 }),
        (entries) => {
          const reversed = [...entries].reverse();
          expect(fingerprint(new Map(reversed))).toBe(fingerprint(new Map(entries)));
          const keys = entries.map(([key]) => key);
          expect(fingerprint(new Set([...keys].reverse()))).toBe(fingerprint(new Set(keys)));
        },
      ),
    );
  });

  it("tells a BigInt from the string and the number with the same digits", () => {
    const prints = [
      fingerprint(1n),
      fingerprint("1"),
      fingerprint(1),
      fingerprint({ amount: 10n }),
      fingerprint({ amount: "10" }),
      fingerprint({ amount: 10 }),
    ];
    expect(new Set(prints).size).toBe(prints.length);
    expect(fingerprint({ amount: 10n })).toBe(fingerprint({ amount: BigInt(10) }));
  });

  it("compares Dates by their time, apart from their ISO string; an invalid Date is stable", () => {
    const at = "2026-01-01T00:00:00.000Z";
    expect(fingerprint({ at: new Date(at) })).toBe(fingerprint({ at: new Date(Date.parse(at)) }));
    expect(fingerprint({ at: new Date(at) })).not.toBe(fingerprint({ at: new Date("2026-01-01T00:00:00.001Z") }));
    expect(fingerprint({ at: new Date(at) })).not.toBe(fingerprint({ at }));
    expect(fingerprint({ at: new Date("not a date") })).toBe(fingerprint({ at: new Date(Number.NaN) }));
    expect(fingerprint({ at: new Date("not a date") })).not.toBe(fingerprint({ at: null }));
  });

  it("compares typed arrays, ArrayBuffers and DataViews by type and content", () => {
    const prints = [
      fingerprint(Uint8Array.of(1, 2)),
      fingerprint(Uint8Array.of(1, 3)),
      fingerprint(Int16Array.of(1, 2)),
      fingerprint(Float64Array.of(1, 2)),
      fingerprint([1, 2]),
      fingerprint(Uint8Array.of(1, 2).buffer),
      fingerprint(new DataView(Uint8Array.of(1, 2).buffer)),
    ];
    expect(new Set(prints).size).toBe(prints.length);
    expect(fingerprint(Uint8Array.of(1, 2))).toBe(fingerprint(new Uint8Array([1, 2])));
    expect(fingerprint(Uint8Array.of(1, 2).buffer)).not.toBe(fingerprint(Uint8Array.of(1, 3).buffer));
    // A view counts only the bytes it sees.
    const window = new Uint8Array(Uint8Array.of(9, 1, 2, 9).buffer, 1, 2);
    expect(fingerprint(window)).toBe(fingerprint(Uint8Array.of(1, 2)));
    expect(fingerprint(new DataView(Uint8Array.of(9, 1, 2, 9).buffer, 1, 2))).toBe(fingerprint(new DataView(Uint8Array.of(1, 2).buffer)));
  });

  it("tells NaN, Infinity and -Infinity from null and from each other", () => {
    const prints = [null, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map((value) => fingerprint({ value }));
    expect(new Set(prints).size).toBe(4);
    expect(fingerprint({ value: Number.NaN })).toBe(fingerprint({ value: 0 / 0 }));
  });

  it("drops undefined object members, as JSON does", () => {
    expect(fingerprint({ to: "a@example.com", cc: undefined })).toBe(fingerprint({ to: "a@example.com" }));
  });

  it("uses a user toJSON, so a value object counts as what it serialises to", () => {
    class Money {
      constructor(readonly cents: number) {}
      toJSON(): string {
        return `EUR ${this.cents / 100}`;
      }
    }
    expect(fingerprint({ price: new Money(1000) })).toBe(fingerprint({ price: "EUR 10" }));
    expect(fingerprint({ price: new Money(1000) })).not.toBe(fingerprint({ price: new Money(1001) }));
  });

  it("survives circular references in Maps and Sets", () => {
    const registry = new Map<string, unknown>();
    registry.set("self", registry);
    const group = new Set<unknown>();
    group.add(group);
    expect(fingerprint({ registry, group })).toMatch(/^[0-9a-f]{16}$/);
    expect(canonicalJson({ registry, group })).toBe('{"group":["[Circular]"],"registry":{"self":"[Circular]"}}');
  });
});

describe("canonicalJson: display of Maps, Sets, BigInts, Dates and binary data", () => {
  it("writes a Map with string keys as an object with sorted keys", () => {
    expect(
      canonicalJson(
        new Map<string, unknown>([
          ["b", 1],
          ["a", [2]],
        ]),
      ),
    ).toBe('{"a":[2],"b":1}');
  });

  it("writes a Map with other keys as sorted [key, value] pairs", () => {
    const text = canonicalJson(
      new Map<unknown, string>([
        [2, "two"],
        [{ id: 1 }, "object"],
        [1, "one"],
      ]),
    );
    expect(JSON.parse(text)).toEqual([
      [1, "one"],
      [2, "two"],
      [{ id: 1 }, "object"],
    ]);
  });

  it("writes a Set as a sorted array, whatever the insertion order", () => {
    expect(canonicalJson({ tags: new Set(["b", "a"]) })).toBe('{"tags":["a","b"]}');
    expect(canonicalJson(new Set(["a", "b"]))).toBe(canonicalJson(new Set(["b", "a"])));
  });

  it("writes typed arrays and buffers as arrays of numbers", () => {
    expect(canonicalJson({ bytes: Uint8Array.of(1, 2), samples: Float32Array.of(0.5), big: BigInt64Array.of(3n) })).toBe(
      '{"big":["3"],"bytes":[1,2],"samples":[0.5]}',
    );
    expect(canonicalJson(Uint8Array.of(7, 8).buffer)).toBe("[7,8]");
    expect(canonicalJson(new DataView(Uint8Array.of(7, 8, 9).buffer, 1))).toBe("[8,9]");
  });

  it("writes an invalid Date as null, like JSON.stringify", () => {
    expect(canonicalJson({ at: new Date("not a date") })).toBe('{"at":null}');
  });

  it("always writes valid JSON", () => {
    const value = {
      map: new Map<unknown, unknown>([
        [1n, new Set([Number.NaN])],
        ["k", new Date(0)],
      ]),
      set: new Set([undefined, Number.NEGATIVE_INFINITY]),
      buffer: new ArrayBuffer(2),
    };
    expect(() => JSON.parse(canonicalJson(value))).not.toThrow();
  });
});

describe("deeply nested arguments", () => {
  /** `levels` objects, each the only member of the one outside it. Built without recursion. */
  const nestedObjects = (levels: number): unknown => {
    let value: unknown = { leaf: true };
    for (let level = 1; level < levels; level++) value = { child: value };
    return value;
  };
  const nestedArrays = (levels: number): unknown => {
    let value: unknown = ["leaf"];
    for (let level = 1; level < levels; level++) value = [value];
    return value;
  };

  const expectDepthError = (run: () => unknown) => {
    let thrown: unknown;
    try {
      run();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ArgumentDepthError);
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).not.toBeInstanceOf(RangeError);
    const depthError = thrown as ArgumentDepthError;
    expect(depthError.name).toBe("ArgumentDepthError");
    expect(depthError.maxDepth).toBe(1000);
    expect(depthError.message).toBe("Arguments are nested deeper than 1000 levels.");
  };

  it("allows 1000 levels", () => {
    expect(MAX_ARGUMENT_DEPTH).toBe(1000);
    for (const value of [nestedObjects(1000), nestedArrays(1000)]) {
      expect(argumentsFingerprint(value)).toMatch(/^[0-9a-f]{16}$/);
      expect(() => JSON.parse(canonicalJson(value))).not.toThrow();
    }
  });

  it("throws ArgumentDepthError, not a stack overflow, past 1000 levels", () => {
    for (const value of [nestedObjects(1001), nestedArrays(1001), nestedObjects(20_000), nestedArrays(20_000)]) {
      expectDepthError(() => argumentsFingerprint(value));
      expectDepthError(() => canonicalJson(value));
    }
  });

  it("counts levels through Maps, Sets and toJSON too", () => {
    let throughMaps: unknown = "leaf";
    for (let level = 0; level < 20_000; level++) throughMaps = level % 2 === 0 ? new Map([["next", throughMaps]]) : new Set([throughMaps]);
    expectDepthError(() => argumentsFingerprint(throughMaps));
    expectDepthError(() => canonicalJson(throughMaps));
    // A toJSON that always returns a new object with the same toJSON never ends on its own.
    const endless = (): unknown => ({ toJSON: endless });
    expectDepthError(() => argumentsFingerprint(endless()));
    expectDepthError(() => canonicalJson(endless()));
  });
});

describe("canonicalJson writes strings as JSON.stringify does", () => {
  it("for plain text, quotes, backslashes, control characters and surrogates", () => {
    const samples = [
      "",
      "plain",
      'say "hi"',
      "back\\slash",
      "tab\tnew\nline\u0000",
      "emoji 😀",
      "lone \ud800 high",
      "lone \udc00 low",
      "ünïcödé",
    ];
    for (const sample of samples) expect(canonicalJson({ [sample]: sample })).toBe(JSON.stringify({ [sample]: sample }));
  });
});
