// Service tiers (issue 35), as each provider sells them on its synchronous API: the tier a request
// asks for in its body, a flex capacity that sheds a share of flex requests with the provider's own
// refusal (before any limit counts them), Groq's flex in limits of its own, the tier that served
// reported where the provider reports it, and the charge per tier. handle.ts calls these hooks.
//
// Sources:
// - OpenAI: developers.openai.com/api/docs/guides/flex-processing ("Tokens are priced at Batch API
//   rates"; "a 429 Resource Unavailable error code. You will not be charged"), /priority-processing
//   and openai.com/api-priority-processing (priority at 1.75x to 2x: 2x here); flex for "limited
//   models" (the GPT-5 family, o3, o4-mini). The answer's `service_tier` (`flex`, `default`,
//   `priority`) is the tier that served. The refusal's body is not documented beyond "429 Resource
//   Unavailable": its code and message are stand-in wording. A flex request for a model without flex
//   is refused with a 400 `Unsupported service_tier: flex` (the wording in openai/codex#15099, third
//   party; Azure's flex page documents the 400 invalid_request_error for an unsupported model).
// - Groq: console.groq.com/docs/flex-processing: "10x higher rate limits compared to on-demand",
//   "Pricing matches the on-demand tier", refused at once with 498 `capacity_exceeded`; the answer's
//   `service_tier` (`on_demand`, `flex`: groq/groq-python `types/chat/chat_completion.py`).
// - Gemini: ai.google.dev/gemini-api/docs/optimization and the cookbook's `Inference_tiers.ipynb`:
//   `service_tier` flex (50% off; "sheddable": it "fails with 503 errors") and priority (75% to 100%
//   more: 2x here); the tier that served in the `x-gemini-service-tier` header.
// - Anthropic: platform.claude.com/docs/en/api/service-tiers: `service_tier` `auto` or
//   `standard_only`, the tier in `usage.service_tier`; no flex, and no Priority Tier capacity here.
import type { Dialect, DialectName, EndpointResult, ErrorReply, SseEvent } from "./dialect.ts";
import type { StandinOptions, TierPrice } from "./options.ts";
import type { ParsedRequest } from "./request.ts";

export type Tier = "flex" | "standard" | "priority";
export const TIERS: readonly Tier[] = ["flex", "standard", "priority"];

interface TierRow {
  /** The endpoints whose bodies take `service_tier`. */
  endpoints: readonly string[];
  /** The field's values, lowercased, as tiers. */
  names: Readonly<Record<string, Tier>>;
  /** What an answer calls each tier, and where it says it. */
  reports: Readonly<Record<Tier, string>>;
  where: "body" | "usage" | "header";
  /** The models that sell flex; a flex request for another is refused. Absent: every model. */
  flexModels?: RegExp;
  /** Its refusal when flex has no room. */
  shed(d: Dialect): ErrorReply;
  /** A tier's price as a multiple of standard's, where `prices` gives none. */
  ratio: Readonly<Partial<Record<Tier, number>>>;
  /** Flex counts in limits of its own, this many times standard's. */
  flexLimits?: number;
}

const CHAT = ["/chat/completions"];

const ROWS: Partial<Record<DialectName, TierRow>> = {
  openai: {
    endpoints: ["/chat/completions", "/responses"],
    names: { flex: "flex", default: "standard", auto: "standard", priority: "priority" },
    reports: { flex: "flex", standard: "default", priority: "priority" },
    where: "body",
    flexModels: /^(?:gpt-5|o3|o4-mini)/,
    shed: () => ({ status: 429, body: { error: { message: "Resource Unavailable: flex processing has no capacity for this request right now. You were not charged. Retry later, or use the default service tier.", type: "server_error", param: null, code: "resource_unavailable" } } }),
    ratio: { flex: 0.5, priority: 2 },
  },
  groq: {
    endpoints: CHAT,
    names: { flex: "flex", on_demand: "standard", auto: "standard" },
    reports: { flex: "flex", standard: "on_demand", priority: "performance" },
    where: "body",
    shed: (d) => d.fault(498),
    ratio: { flex: 1 },
    flexLimits: 10,
  },
  gemini: {
    endpoints: [":generateContent", ":streamGenerateContent", ":streamGenerateContent?alt=sse"],
    names: { flex: "flex", standard: "standard", priority: "priority", service_tier_flex: "flex", service_tier_standard: "standard", service_tier_priority: "priority" },
    reports: { flex: "flex", standard: "standard", priority: "priority" },
    where: "header",
    shed: (d) => d.fault(503),
    ratio: { flex: 0.5, priority: 2 },
  },
  anthropic: {
    endpoints: ["/messages"],
    names: { auto: "standard", standard_only: "standard" },
    reports: { flex: "standard", standard: "standard", priority: "priority" },
    where: "usage",
    shed: (d) => d.fault(529),
    ratio: {},
  },
};

/** The tier a request asks for in its body, as its provider reads it: null when it names none (standard serves); `unsupported` for flex on a model without it. */
export function askedTier(d: Dialect, endpoint: string, req: ParsedRequest): Tier | "unsupported" | null {
  const row = ROWS[d.name];
  if (!row || !row.endpoints.includes(endpoint) || req.serviceTier === null) return null;
  const tier = row.names[req.serviceTier.toLowerCase()] ?? null;
  if (tier === "flex" && row.flexModels && !row.flexModels.test(req.model)) return "unsupported";
  return tier;
}

/** A flex request for a model that does not sell it. */
export const unsupportedTier = (d: Dialect): ErrorReply => d.invalid("Unsupported service_tier: flex");

/** The provider's refusal when flex has no room. */
export function shedReply(d: Dialect): ErrorReply {
  return ROWS[d.name]!.shed(d);
}

/** Where a tier counts: Groq's flex in an account of its own at ten times the limits; every other tier in the key's. */
export function tierAccount(d: Dialect, key: string, o: StandinOptions, tier: Tier | null): { key: string; o: StandinOptions } {
  const k = tier === "flex" ? ROWS[d.name]?.flexLimits : undefined;
  if (!k) return { key, o };
  return { key: `${key}\u0000flex`, o: { ...o, rpm: o.rpm * k, tpm: o.tpm * k, rpd: o.rpd * k, itpm: o.itpm && o.itpm * k, otpm: o.otpm && o.otpm * k } };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Sets the tier in one answer object where its provider says it. */
function stamp(o: unknown, row: TierRow, name: string): void {
  if (!isObj(o)) return;
  if (row.where === "body") {
    if ("service_tier" in o || (typeof o.object === "string" && o.object.startsWith("chat.completion"))) o.service_tier = name;
    if (isObj(o.response) && "service_tier" in o.response) o.response.service_tier = name;
  } else if (row.where === "usage") {
    for (const u of [o.usage, isObj(o.message) ? o.message.usage : undefined]) if (isObj(u) && "service_tier" in u) u.service_tier = name;
  }
}

/** The answer as its provider reports the tier that served it: in its body (each stream event), its usage, or a header (returned). */
export function reportTier(d: Dialect, result: EndpointResult, tier: Tier): Record<string, string> {
  const row = ROWS[d.name];
  if (!row) return {};
  const name = row.reports[tier];
  if (row.where === "header") return { "x-gemini-service-tier": name };
  if ("json" in result) (Array.isArray(result.json) ? result.json : [result.json]).forEach((o) => stamp(o, row, name));
  else for (const e of [...result.stream.head, ...result.stream.deltas, ...result.stream.tail] as SseEvent[]) stamp(e.data, row, name);
  return {};
}

/** What the provider charges for an answer at a tier (USD), from `prices`: the tier's own, else the provider's ratio; null: unpriced. */
export function charge(o: StandinOptions, d: Dialect, model: string, tier: Tier, input: number, output: number): number | null {
  const listed = o.prices[model];
  if (!listed) return null;
  const ratio = tier === "standard" ? 1 : ROWS[d.name]?.ratio[tier];
  const p: TierPrice | undefined = (tier === "standard" ? listed : listed[tier]) ?? (ratio === undefined ? undefined : { input: listed.input * ratio, output: listed.output * ratio });
  return p ? (input * p.input + output * p.output) / 1e6 : null;
}
