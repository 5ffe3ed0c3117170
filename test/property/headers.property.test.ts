import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RUNS, TIMEOUT } from "./runs";
import {
  MAX_WAIT_MS, parseDuration, parseReset, parseRetryAfter, parseRetryInfo,
} from "../../src/policy/headers";
import { parseRateLimitHeaders } from "../../src/policy/limits";
import { DIALECTS } from "../../src/providers/dialects";
import { learnFromRefusal, probe } from "../../src/limiter/learned";
import { charge, emptyQuota, fitsAt, MAX_QUOTA_WAIT_MS } from "../../src/limiter/quota";
import { observe } from "../../src/limiter/quota-reading";
import type { QuotaReading, RateLimitInfo } from "../../src/policy/types";

const DAY = MAX_WAIT_MS;

/*
 * Properties (all of them "for ANY input", so every parser must be total and bounded):
 *   W(x)  := x === null || (typeof x === "number" && Number.isFinite(x) && 0 <= x <= MAX_WAIT_MS (24 h))
 *   R(x)  := x === null || (typeof x === "number" && Number.isFinite(x) && now - 24 h <= x <= now + 24 h)
 *   C(x)  := x === null || (typeof x === "number" && Number.isFinite(x) && x >= 0)
 *   Q(r)  := r === null || (C(r.limit) && C(r.remaining) && R(r.resetAt) && not all three null)
 * 1. parseDuration(v), parseRetryAfter(v, now), parseRetryInfo(body) never throw and satisfy W.
 * 2. parseReset(v, now) never throws and satisfies R.
 * 3. parseRateLimitHeaders(h, now, body) never throws, W(retryAfterMs), Q(requests), Q(tokens),
 *    for any set of the headers it reads, each with any value a Headers object can hold.
 * 4. (guard against a vacuous pass) values a provider really sends, in range, are still accepted.
 */

// ---------------------------------------------------------------------------------------------
// Arbitraries

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const UNITS = ["h", "m", "s", "ms", "us", "µs", "μs", "ns", "d", "S", "M", "x", "", " ", "ms ", "sec"];

const p2 = (n: number) => String(n).padStart(2, "0");

/** Numbers written every way a broken server, a proxy or a wrong unit could write them. */
const numeric: fc.Arbitrary<string> = fc.oneof(
  fc.double().map(String), // NaN, Infinity, -0, 1e+308, 5e-324, ...
  fc.double().map((n) => n.toExponential()),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((n) => n.toFixed(3)),
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.nat({ max: 200_000 }).map(String),
  fc.integer({ min: 0, max: 4_102_444_800 }).map(String), // epoch seconds up to 2100
  fc.stringMatching(/^[+-]?\d{0,40}(\.\d{0,20})?([eE][+-]?\d{1,4})?$/),
  fc.stringMatching(/^\d{1,33}$/), // just around decimal()'s 32-character cut
  fc.constantFrom(
    "NaN", "Infinity", "-Infinity", "+Infinity", "1e400", "-1e400", "1e-400", "0x10", "0b1", "0o7", "1_000", "١٢", "１２",
    "-0", "+0", ".5", "5.", ".", "-", "", " ", "0.0000001", "9".repeat(32), "9".repeat(33), "1".padEnd(309, "0"), "\t7\t",
  ),
);

/** Go-style durations: well-formed ones of many parts (which must stay within a day), and wild ones. */
const duration: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(fc.tuple(fc.oneof(fc.nat({ max: 90 }).map(String), fc.stringMatching(/^\d{0,3}\.\d{1,4}$/)), fc.constantFrom("h", "m", "s", "ms", "us", "µs", "μs", "ns")), { minLength: 1, maxLength: 8 })
    .map((parts) => parts.map(([n, u]) => n + u).join("")),
  fc
    .tuple(
      fc.array(
        fc.tuple(
          fc.oneof(fc.nat({ max: 100_000 }).map(String), numeric, fc.stringMatching(/^\d{0,5}\.\d{0,5}$/), fc.constantFrom("1e3", "-1", "")),
          fc.constantFrom(...UNITS),
        ),
        { minLength: 1, maxLength: 40 },
      ),
      fc.constantFrom("", " ", "\t"),
    )
    .map(([parts, pad]) => pad + parts.map(([n, u]) => n + u).join("") + pad),
);

/**
 * A value that depends on the clock (an instant near `now`, written as a date) is generated as a
 * function of `now`, so that `now` itself can be random without fc.chain (which would rebuild every
 * arbitrary on every run). It prints as the text it gives for the reference clock.
 */
type AtNow = (now: number) => string;
const REF_NOW = Date.UTC(2026, 10, 22, 8, 0, 0);
const atNow = (f: AtNow): AtNow => Object.assign(f, { [fc.toStringMethod]: () => `atNow(${JSON.stringify(f(REF_NOW))})` });
const fixed = (a: fc.Arbitrary<string>): fc.Arbitrary<AtNow> => a.map((v) => atNow(() => v));

/** An instant: near `now` (where the accept window is), far away, or at the ends of what Date can hold. */
const instant: fc.Arbitrary<(now: number) => number> = fc.oneof(
  fc.integer({ min: -3 * DAY, max: 3 * DAY }).map((d) => (now: number) => now + d),
  fc.integer({ min: -400 * DAY, max: 400 * DAY }).map((d) => (now: number) => now + d),
  fc.integer({ min: -8.64e15, max: 8.64e15 }).map((t) => () => t),
  fc.constantFrom(-8.64e15, 8.64e15, 0, -1, 253402300799999 /* 9999-12-31 */).map((t) => () => t),
);
/** Date only holds ±8.64e15 ms; a generated instant past that is pinned to the edge. */
const date = (t: number) => new Date(Math.max(-8.64e15, Math.min(8.64e15, t)));

/** The same instant in every date form providers use (and some with fields out of range). */
const dateText: fc.Arbitrary<AtNow> = fc.oneof(
  fc.tuple(instant, fc.nat({ max: 9 }), fc.constantFrom("Z", "z", "+00:00", "-05:00", "+0530", "+25:00", "-23:59", ""), fc.boolean()).map(
    ([at, digits, zone, space]) => atNow((now) => {
      const t = at(now);
      const iso = date(t).toISOString(); // ±YYYYYY for years outside 0..9999
      const frac = digits ? `.${String(t).slice(-3).padEnd(digits, "7").slice(0, digits)}` : "";
      return iso.slice(0, 19).replace("T", space ? " " : "T") + frac + zone;
    }),
  ),
  instant.map((at) => atNow((now) => date(at(now)).toUTCString())), // IMF-fixdate
  fc.tuple(instant, fc.constantFrom("GMT", "UTC", "gmt", "+0000", "")).map(([at, z]) => atNow((now) => date(at(now)).toUTCString().replace("GMT", z))),
  instant.map((at) => atNow((now) => {
    const d = date(at(now)); // RFC 850
    return `${LONG_DAYS[d.getUTCDay()]}, ${p2(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${p2(d.getUTCFullYear() % 100)} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} GMT`;
  })),
  instant.map((at) => atNow((now) => {
    const d = date(at(now)); // asctime
    return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, " ")} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
  })),
  // Right shape, any digits: month 00 or 99, day 31 of February, hour 24, second 60, offset 99:99, ...
  fixed(fc.stringMatching(/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,12})?([Zz]|[+-]\d{2}:?\d{2})$/)),
  fixed(fc.tuple(fc.constantFrom(...DAYS), fc.nat({ max: 99 }), fc.constantFrom(...MONTHS, "Foo", "nov", "NOV"), fc.nat({ max: 9999 }), fc.nat({ max: 99 }), fc.nat({ max: 99 }), fc.nat({ max: 99 }))
    .map(([wd, d, m, y, h, mi, s]) => `${wd}, ${d} ${m} ${String(y).padStart(4, "0")} ${p2(h)}:${p2(mi)}:${p2(s)} GMT`)),
  fixed(fc.tuple(fc.constantFrom(...LONG_DAYS), fc.nat({ max: 99 }), fc.constantFrom(...MONTHS), fc.nat({ max: 99 }), fc.nat({ max: 99 }), fc.nat({ max: 99 }), fc.nat({ max: 99 }))
    .map(([wd, d, m, y, h, mi, s]) => `${wd}, ${p2(d)}-${m}-${p2(y)} ${p2(h)}:${p2(mi)}:${p2(s)} GMT`)),
  fixed(fc.tuple(fc.constantFrom(...DAYS), fc.constantFrom(...MONTHS), fc.nat({ max: 99 }), fc.nat({ max: 99 }), fc.nat({ max: 99 }), fc.nat({ max: 99 }), fc.nat({ max: 9999 }))
    .map(([wd, m, d, h, mi, s, y]) => `${wd} ${m} ${String(d).padStart(2, " ")} ${p2(h)}:${p2(mi)}:${p2(s)} ${y}`)),
);

/** Free text: every unicode plane, control bytes, and the characters the parsers split on. */
const junk: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(..."0123456789.eE+-:TZtz hmsuµμn,;=\"'\t/".split(""), "GMT", "ms", "Nov", "NaN", "Infinity"), maxLength: 70 }),
);

/** Any value for one header: numbers, durations, dates, junk, and concatenations of those. */
const value: fc.Arbitrary<AtNow> = fc.oneof(
  { arbitrary: fixed(numeric), weight: 4 },
  { arbitrary: fixed(duration), weight: 3 },
  { arbitrary: dateText, weight: 3 },
  { arbitrary: fixed(junk), weight: 2 },
  {
    arbitrary: fc.tuple(fc.oneof(fixed(numeric), fixed(duration), dateText), fixed(fc.oneof(numeric, duration, junk)))
      .map(([a, b]) => atNow((now) => a(now) + b(now))),
    weight: 1,
  },
);

/** `RateLimit` / `RateLimit-Policy` fields: lists of `"name";k=v` items with any v. */
const sfField: fc.Arbitrary<AtNow> = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom('"default"', '"burst"', '"daily"', "default", '""', ""), junk),
      fc.array(fc.tuple(fc.constantFrom("r", "t", "q", "w", "pk", "", " r ", "R"), fc.option(value, { nil: undefined })), { maxLength: 5 }),
    ),
    { maxLength: 4 },
  )
  .map((items) => atNow((now) =>
    items.map(([n, ps]) => [n, ...ps.map(([k, v]) => (v === undefined ? k : `${k}=${v(now)}`))].join(";")).join(", ")));

/** Every header the parser reads. */
const HEADER_NAMES = [
  "retry-after", "retry-after-ms", "x-ms-retry-after-ms",
  ...["requests", "tokens"].flatMap((k) => [`x-ratelimit-limit-${k}`, `x-ratelimit-remaining-${k}`, `x-ratelimit-reset-${k}`]),
  ...["requests", "tokens", "input-tokens", "output-tokens"].flatMap((k) => ["limit", "remaining", "reset"].map((p) => `anthropic-ratelimit-${k}-${p}`)),
  ...["x-ratelimit-", "ratelimit-"].flatMap((p) => [`${p}limit`, `${p}remaining`, `${p}reset`]),
  // The other dialects' families: Together's per-second tokens, Mistral's by-size windows, Fireworks' prompt/generated.
  "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-tokenlimit-limit", "x-tokenlimit-remaining",
  ...["minute", "month"].flatMap((w) => [`x-ratelimitbysize-limit-${w}`, `x-ratelimitbysize-remaining-${w}`]),
  "ratelimitbysize-limit", "ratelimitbysize-remaining", "ratelimitbysize-reset",
  ...["prompt", "generated"].flatMap((k) => [`x-ratelimit-limit-tokens-${k}`, `x-ratelimit-remaining-tokens-${k}`]),
];
const dialect = fc.constantFrom(...Object.values(DIALECTS));

const headerSet: fc.Arbitrary<[string, AtNow][]> = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), value), { maxLength: 14 }),
    fc.option(sfField, { nil: undefined }),
    fc.option(sfField, { nil: undefined }),
    fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES, "ratelimit", "ratelimit-policy", "content-type"), value), { maxLength: 3 }),
  )
  .map(([plain, state, policy, dup]) => [
    ...plain,
    ...(state === undefined ? [] : [["ratelimit", state] as [string, AtNow]]),
    ...(policy === undefined ? [] : [["ratelimit-policy", policy] as [string, AtNow]]),
    ...dup, // repeated names: Headers joins them with ", "
  ]);

/**
 * The headers as the parser gets them. Printable ASCII goes into a real `Headers` (which trims and
 * joins repeats with ", "). Anything else (unicode, control characters, lone surrogates) cannot be
 * put in one without workerd re-encoding it, so it goes into a stand-in that answers `get` the same
 * way: a superset of what a response from the wire can hold.
 */
function toHeaders(pairs: [string, string][]): Headers {
  if (pairs.every(([, v]) => /^[\t\x20-\x7e]*$/.test(v))) {
    const h = new Headers();
    for (const [k, v] of pairs) h.append(k, v);
    return h;
  }
  const m = new Map<string, string>();
  for (const [k, v] of pairs) {
    const t = v.replace(/^[\t ]+|[\t ]+$/g, "");
    m.set(k, m.has(k) ? `${m.get(k)}, ${t}` : t);
  }
  return { get: (k: string) => m.get(k.toLowerCase()) ?? null } as unknown as Headers;
}

/** Google `RetryInfo.retryDelay` in any shape: duration text, proto {seconds, nanos} of any type, or anything. */
const numberLike: fc.Arbitrary<unknown> = fc.oneof(
  fc.double(), fc.integer(), numeric, fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.constantFrom(null, undefined, true, [], {}, [5], "30s"),
  fc.anything({ maxDepth: 1 }),
);
const retryDelay: fc.Arbitrary<unknown> = fc.oneof(
  duration, numeric, junk,
  fc.record({ seconds: numberLike, nanos: numberLike }, { requiredKeys: [] }),
  fc.anything({ maxDepth: 2 }),
);

const hostile: unknown[] = [
  { error: { get details(): unknown { throw new Error("getter"); } } },
  { error: { details: [{ get retryDelay(): unknown { throw new Error("getter"); } }] } },
  { error: { details: [{ retryDelay: { seconds: Symbol("s") } }] } },
  { error: { details: [{ retryDelay: { valueOf: () => 3 } }, { retryDelay: { seconds: { valueOf: () => { throw new Error("valueOf"); } } } }] } },
  { error: { details: [{ retryDelay: { toString: () => "30s" } }] } },
  new Proxy({}, { get: () => { throw new Error("proxy"); } }),
  Object.create(null),
];

const body: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 4 }),
  fc.anything({ maxDepth: 3, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true }),
  fc.constantFrom(...hostile),
  // Gemini-shaped, perhaps wrapped in an array, perhaps still JSON text.
  fc
    .tuple(
      fc.array(
        fc.oneof(fc.record({ "@type": fc.constant("type.googleapis.com/google.rpc.RetryInfo"), retryDelay }), fc.record({ retryDelay }), fc.anything({ maxDepth: 1 })),
        { maxLength: 4 },
      ),
      fc.boolean(),
      fc.boolean(),
    )
    .map(([details, wrap, asText]) => {
      const b = { error: { code: 429, status: "RESOURCE_EXHAUSTED", details } };
      const v: unknown = wrap ? [b] : b;
      if (!asText) return v;
      try {
        return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x));
      } catch {
        return v;
      }
    }),
  junk,
);

/** A clock anywhere from 1970 to 2100, or the usual ones. */
const nowArb: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: 0, max: 4_102_444_800_000 }),
  fc.constantFrom(Date.UTC(2026, 10, 22, 8, 0, 0), Date.now()),
);

/** Any value at all where a string is expected: the parsers are called from untyped places too. */
const anyInput: fc.Arbitrary<unknown> = fc.oneof(fc.anything({ maxDepth: 1 }), fc.constantFrom(undefined, null, 42, Number.NaN, {}, []));

// ---------------------------------------------------------------------------------------------
// Checks (plain code: `expect` in a loop of 100,000 runs costs more than the parsers)

function fail(what: string, got: unknown): never {
  throw new Error(`${what}: got ${typeof got === "number" ? String(got) : JSON.stringify(got)}`);
}
function isWait(x: unknown, what: string): void {
  if (x === null) return;
  if (typeof x !== "number" || !Number.isFinite(x) || x < 0 || x > MAX_WAIT_MS) fail(`${what} is null or a finite wait in [0, 24h]`, x);
}
function isResetAt(x: unknown, now: number, what: string): void {
  if (x === null) return;
  if (typeof x !== "number" || !Number.isFinite(x) || x < now - DAY || x > now + DAY) fail(`${what} is null or within now ± 24h (now=${now})`, x);
}
function isCount(x: unknown, what: string): void {
  if (x === null) return;
  if (typeof x !== "number" || !Number.isFinite(x) || x < 0) fail(`${what} is null or a finite count >= 0`, x);
}
function isReading(r: QuotaReading | null, now: number, what: string): void {
  if (r === null) return;
  isCount(r.limit, `${what}.limit`);
  isCount(r.remaining, `${what}.remaining`);
  isResetAt(r.resetAt, now, `${what}.resetAt`);
  if (r.limit === null && r.remaining === null && r.resetAt === null) fail(`${what} is null rather than all-null`, r);
}
function isInfo(info: RateLimitInfo, now: number): void {
  isWait(info.retryAfterMs, "retryAfterMs");
  isReading(info.requests, now, "requests");
  isReading(info.tokens, now, "tokens");
}

const params = { numRuns: RUNS };

// ---------------------------------------------------------------------------------------------

describe("rate-limit header parsers: total and bounded on any input", () => {
  it("parseDuration: null or a wait in [0, 24h], never a throw", () => {
    fc.assert(
      fc.property(fc.oneof(duration, numeric, junk, dateText.map((f) => f(REF_NOW))), (v) => isWait(parseDuration(v), `parseDuration(${JSON.stringify(v)})`)),
      params,
    );
    fc.assert(fc.property(anyInput, (v) => isWait(parseDuration(v as string), "parseDuration(non-string)")), { numRuns: Math.ceil(RUNS / 10) });
  }, TIMEOUT);

  it("parseRetryAfter: null or a wait in [0, 24h], never a throw", () => {
    fc.assert(
      fc.property(nowArb, value, (now, f) => {
        const v = f(now);
        isWait(parseRetryAfter(v, now), `parseRetryAfter(${JSON.stringify(v)}, ${now})`);
      }),
      params,
    );
    fc.assert(fc.property(anyInput, nowArb, (v, now) => isWait(parseRetryAfter(v as string, now), "parseRetryAfter(non-string)")), { numRuns: Math.ceil(RUNS / 10) });
  }, TIMEOUT);

  it("parseReset: null or an instant within now ± 24h, never a throw", () => {
    fc.assert(
      fc.property(nowArb, value, (now, f) => {
        const v = f(now);
        isResetAt(parseReset(v, now), now, `parseReset(${JSON.stringify(v)}, ${now})`);
      }),
      params,
    );
    fc.assert(fc.property(anyInput, nowArb, (v, now) => isResetAt(parseReset(v as string, now), now, "parseReset(non-string)")), { numRuns: Math.ceil(RUNS / 10) });
  }, TIMEOUT);

  it("parseRetryInfo: null or a wait in [0, 24h] for any body, never a throw", () => {
    fc.assert(fc.property(body, (b) => isWait(parseRetryInfo(b), "parseRetryInfo")), params);
  }, TIMEOUT);

  it("parseRateLimitHeaders: bounded waits, resets and counts for any header set and body, in every dialect", () => {
    fc.assert(
      fc.property(nowArb, headerSet, body, dialect, (now, set, b, d) => {
        const pairs = set.map(([k, f]): [string, string] => [k, f(now)]);
        try {
          isInfo(parseRateLimitHeaders(toHeaders(pairs), now, d, b), now);
        } catch (e) {
          throw new Error(`${(e as Error).message}\n  now=${now}\n  headers=${JSON.stringify(pairs)}`);
        }
      }),
      params,
    );
  }, TIMEOUT);

  // Guard against a vacuous pass: the generators above do reach the accept paths, and these do too.
  it("still accepts what providers really send, in range", () => {
    fc.assert(
      fc.property(nowArb, fc.integer({ min: 0, max: DAY / 1000 }), fc.integer({ min: -DAY / 1000, max: DAY / 1000 }), (now, secs, off) => {
        expect(parseRetryAfter(String(secs), now)).toBe(secs * 1000);
        expect(parseRateLimitHeaders(new Headers({ "retry-after-ms": String(secs) }), now, DIALECTS.openai).retryAfterMs).toBe(secs);
        const at = Math.floor(now / 1000) * 1000 + off * 1000; // whole seconds, as HTTP-dates are
        if (Math.abs(at - now) <= DAY) {
          expect(parseReset(new Date(at).toISOString(), now)).toBe(at);
          expect(parseReset(new Date(at).toUTCString(), now)).toBe(at);
        }
        const h = Math.floor(secs / 3600), m = Math.floor((secs % 3600) / 60), s = secs % 60;
        expect(parseDuration(`${h}h${m}m${s}s`)).toBe(secs * 1000);
        expect(parseReset(`${m}m${s}.5s`, now)).toBe(now + (m * 60 + s) * 1000 + 500);
      }),
      { numRuns: Math.ceil(RUNS / 4) },
    );
  }, TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// The quota model fed any sequence of readings (issue 32): no window ever makes a request wait
// forever, nor past a bound. On b88fffb a window told without limit or reset refilled at 0, and a
// reading below one request's cost made fitsAt Infinity, persisted.

const count = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2_000 }), fc.double({ min: 0, max: 1e7, noNaN: true }));
const reading = fc.record({
  limit: count,
  remaining: count,
  resetAt: fc.oneof(fc.constant(null), fc.integer({ min: -DAY, max: DAY })),
  periodMs: fc.constantFrom(undefined, 1_000, 60_000, 86_400_000, 30 * 86_400_000),
  cap: fc.constantFrom(undefined, true),
});
const quotaOp = fc.oneof(
  fc.record({ k: fc.constant("read" as const), dt: fc.integer({ min: 0, max: 120_000 }), requests: fc.option(reading, { nil: null }), tokens: fc.option(reading, { nil: null }), lag: fc.integer({ min: 0, max: 5_000 }) }),
  fc.record({ k: fc.constant("grant" as const), dt: fc.integer({ min: 0, max: 5_000 }), cost: fc.integer({ min: 0, max: 100_000 }) }),
  fc.record({ k: fc.constant("refused" as const), dt: fc.integer({ min: 0, max: 5_000 }), kind: fc.constantFrom("requests" as const, "tokens" as const), limit: fc.option(fc.integer({ min: 0, max: 1_000 }), { nil: null }), periodMs: fc.constantFrom(1_000, 60_000, 86_400_000) }),
  fc.record({ k: fc.constant("success" as const), dt: fc.integer({ min: 0, max: 5_000 }), cost: fc.integer({ min: 0, max: 10_000 }) }),
);

describe("the quota model never locks a key", () => {
  it("fitsAt for one request is finite and at most MAX_QUOTA_WAIT_MS away, after any sequence of readings, grants, refusals and successes", () => {
    fc.assert(
      fc.property(fc.array(quotaOp, { maxLength: 40 }), fc.integer({ min: 1, max: 50_000 }), (ops, cost) => {
        const q = emptyQuota();
        let now = 1_000_000;
        for (const op of ops) {
          now += op.dt;
          if (op.k === "read") {
            const at = (r: typeof op.requests) => r && { ...r, resetAt: r.resetAt === null ? null : now + r.resetAt };
            observe(q, { retryAfterMs: null, requests: at(op.requests), tokens: at(op.tokens) }, now, { ...q.granted }, now - op.lag, { requests: 1, tokens: cost });
          } else if (op.k === "grant") charge(q, op.cost, now);
          else if (op.k === "refused") learnFromRefusal(q, { kind: op.kind, periodMs: op.periodMs, limit: op.limit }, { mark: { ...q.granted }, grantedAt: now, cost }, now);
          else probe(q, op.cost, now);
          const at = fitsAt(q, cost, now);
          expect(Number.isFinite(at)).toBe(true);
          expect(at - now).toBeLessThanOrEqual(MAX_QUOTA_WAIT_MS);
          expect(at).toBeGreaterThanOrEqual(now);
        }
      }),
      params,
    );
  }, TIMEOUT);
});
