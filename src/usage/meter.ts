// Reads each answer's usage for the ledger: the proxy's usage stage. The only work on the request
// path is a JSON.parse of a plain answer already in memory, or a scan of a stream's event lines.
import { type AnswerFacts, noteAnswer } from "../observe/genai";
import { DIALECTS } from "../providers/dialects";
import { routeOf } from "../providers/key";
import type { Provider } from "../providers/table";
import type { Tier, TierSpec, UsageFrames, UsageHeaders, VersionSince } from "../providers/dialect";
import { servedTier } from "../tiers/body";
import { costOf, type PriceTable, priceOf, tierPrice } from "./prices";
import { tapEventStream } from "./event-frames";
import { headerUsage } from "./header-usage";
import { tapStream } from "./stream";
import { type Tokens, usageIn } from "./tokens";

import type { Tags, UsageRecord } from "./types";

export type { Tags, UsageRecord };

/**
 * The body to send: for a streamed chat completion to a provider whose dialect accepts
 * `stream_options.include_usage` (and, where the row says since when, an API version that does),
 * the same body asking for usage, and `strip: true` (the extra chunk is taken out again for a
 * caller who did not ask). Anything else goes as it came.
 */
export function askForUsage(p: Provider, rest: string, search: string, json: unknown, bytes: Uint8Array): { bytes: Uint8Array; strip: boolean } {
  const ask = DIALECTS[p.dialect].usage.ask;
  const b = json as { stream?: unknown; stream_options?: { include_usage?: unknown } } | null;
  const as = { bytes, strip: false };
  if (ask.kind !== "stream_options" || !/\/chat\/completions$/.test(rest) || b?.stream !== true || b.stream_options?.include_usage === true) return as;
  if (ask.since && !versionAccepts(routeOf(p, rest), search, ask.since)) return as;
  const stream_options = { ...(typeof b.stream_options === "object" ? b.stream_options : {}), include_usage: true };
  return { bytes: new TextEncoder().encode(JSON.stringify({ ...b, stream_options })), strip: true };
}

/**
 * Whether the API version a request names takes a field added `since` (the row's): a versionless
 * route does; a version does from that date on (`2024-09-01-preview`, `2024-10-21`), an older one
 * (`2024-02-01`) or none does not.
 */
function versionAccepts(route: string, search: string, since: VersionSince): boolean {
  if (since.versionless.test(route)) return true;
  const v = /^(\d{4}-\d{2}-\d{2})/.exec(new URLSearchParams(search).get(since.param) ?? "");
  return v !== null && v[1]! >= since.date;
}

export interface MeterOptions {
  /** The route's provider and the model the request names: what the answer is priced as. */
  provider: string;
  model: string;
  /** What the answer is priced as where not `model` (Vertex's `<location>/<model>`: providers/key.ts, priceName). */
  priceModel?: string;
  prices: PriceTable;
  /** The gateway asked an OpenAI stream for its usage: its usage chunk is taken out again. */
  strip: boolean;
  /** Where the provider's dialect puts usage in an answer (default: usage.USAGE_AT). */
  usageAt?: readonly (readonly string[])[];
  /** Told each record once it is final (a budget settles with it, a span reads it), and whether its answer ended whole (a stream may be cut). */
  counted?: (r: UsageRecord, whole: boolean) => void;
  /** The request's `gen_ai.operation.name` and arrival: its records carry the operation's end (the metrics). */
  op?: string | null;
  start?: number;
  /** A span's: what the answer says of itself (model, id, finish reasons), noted as it is read. */
  facts?: AnswerFacts;
  /** The provider's tiers (its dialect row's): where an answer tells the tier that served it, and a tier's price ratio. */
  tiers?: TierSpec;
  /** Headers that tell a plain answer's usage where its body does not (its dialect row's). */
  usageHeaders?: UsageHeaders;
}

/** The frames an answer streams in, where the serving row says it may and its content type says it does; else null (text lines). */
const framesOf = (sent: SentAt | undefined): UsageFrames | null =>
  sent?.frames && sent.headers.get("content-type")?.includes(sent.frames.type) ? sent.frames : null;

/** What the meter knows of an answer's tier before reading it: the tier it was sent at, and its headers (Gemini tells it there). */
export interface SentAt {
  tier: Tier;
  headers: Headers;
  /** Binary frames the serving provider streams in (its dialect row's `usage.frames`), where it has them. */
  frames?: UsageFrames;
  /** What the answer is priced as, where not the request's provider and model (a pool member of another provider: its own price). */
  price?: { provider: string; model: string };
}

export class Meter {
  private provider: string;
  private model: string;
  private priceModel: string;
  private prices: PriceTable;
  private strip: boolean;
  private usageAt?: readonly (readonly string[])[];
  private counted?: (r: UsageRecord, whole: boolean) => void;
  private op?: string | null;
  private start: number;
  private facts?: AnswerFacts;
  private tiers?: TierSpec;
  private usageHeaders?: UsageHeaders;
  /** Whether an answer was metered (its record may still be coming, at the end of a stream). */
  used = false;

  constructor(o: MeterOptions) {
    this.provider = o.provider;
    this.model = o.model;
    this.priceModel = o.priceModel ?? o.model;
    this.prices = o.prices;
    this.strip = o.strip;
    this.usageAt = o.usageAt;
    this.counted = o.counted;
    this.op = o.op;
    this.start = o.start ?? 0;
    this.facts = o.facts;
    this.tiers = o.tiers;
    this.usageHeaders = o.usageHeaders;
  }

  /** A plain answer read whole. */
  plain(bytes: Uint8Array, tags: Tags = {}, sent?: SentAt): UsageRecord {
    this.used = true;
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {}
    if (this.facts) noteAnswer(this.facts, json);
    // Some tell it only in headers (a model whose own body has none, behind a cloud's route); the body's is taken first.
    const tokens = usageIn(json, this.usageAt) ?? (sent && this.usageHeaders ? headerUsage(sent.headers, this.usageHeaders) : null);
    return this.record(tokens, tags, this.tierOf(sent, json), true, sent?.price);
  }

  /** A streamed answer: its body, passed through, and its record once the body has ended (its tier, the last an event told). */
  stream(body: ReadableStream<Uint8Array> | null, sse: boolean, tags: Tags = {}, sent?: SentAt): { body: ReadableStream<Uint8Array> | null; record: () => UsageRecord } {
    this.used = true;
    let tier = this.tierOf(sent, null);
    if (!body) return { body, record: () => this.record(null, tags, tier, true, sent?.price) };
    const facts = this.facts;
    const spec = this.tiers;
    const onJson = (json: unknown) => {
      if (facts) noteAnswer(facts, json);
      tier = servedTier(spec, null, json) ?? tier;
    };
    const listen = facts || spec ? onJson : undefined;
    // Binary frames (the row's `usage.frames`) are read frame by frame as they pass; anything else as text lines.
    const frames = framesOf(sent);
    const tap = frames ? tapEventStream(body, frames, listen) : tapStream(body, sse, this.strip && sse, listen, this.usageAt);
    return { body: tap.body, record: () => this.record(tap.tokens(), tags, tier, tap.whole(), sent?.price) };
  }

  /** The tier that served an answer: as it says (header, body), else the tier it went at, else standard. */
  private tierOf(sent: SentAt | undefined, json: unknown): Tier {
    return servedTier(this.tiers, sent?.headers ?? null, json) ?? sent?.tier ?? "standard";
  }

  private record(tokens: Tokens | null, tags: Tags, tier: Tier, whole = true, as?: { provider: string; model: string }): UsageRecord {
    const listed = tokens && priceOf(this.prices, as?.provider ?? this.provider, as?.model ?? this.priceModel);
    // A tier the table cannot price (one the account's default chose: Anthropic's Priority Tier) is
    // charged at the standard price, never left at nothing.
    const price = listed && (tierPrice(listed, tier, this.tiers?.ratio[tier]) ?? listed);
    const r: UsageRecord = { ...tags, model: this.model, tier, tokens, costUsd: tokens && price ? costOf(tokens, price) : null };
    if (this.op) r.ended = { op: this.op, model: this.model, ms: Date.now() - this.start };
    this.counted?.(r, whole);
    return r;
  }
}
