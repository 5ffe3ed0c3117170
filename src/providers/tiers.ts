/**
 * @module The dialect rows' `tiers` column (issue 35): what each provider sells beside its
 * standard tier on the synchronous API, the field a request names it in, where the answer tells
 * the tier that served, what a tier's capacity refusal looks like, how a tier counts against the
 * key's limits and what it costs beside standard. Sources beside each; where only a third party
 * says so, the comment says that too.
 */
import type { TierSpec } from "./dialect";

/**
 * OpenAI: `service_tier` on Chat Completions and Responses (developers.openai.com/api/docs/guides/flex-processing
 * and /priority-processing). `flex`: "priced at Batch API rates", slower, "occasional resource
 * unavailability": a `429 Resource Unavailable`, not charged; retry with backoff, or at standard by
 * sending `auto` or no tier. Flex is for "limited models" (the pricing page: the GPT-5 family, o3,
 * o4-mini); priority for GPT-5, GPT-4.1, GPT-4o, o3 and o4-mini (openai.com/api-priority-processing:
 * 1.75x to 2x standard, 2x here: a budget reserves no less than it may spend). The answer's
 * `service_tier` is the tier that served. Neither page gives flex limits of its own: its requests
 * count in the key's windows. The refusal's body is documented only as "429 Resource Unavailable":
 * at flex, a 429 that is neither the key's rate limit (`rate_limit_exceeded`) nor spent money is the tier's.
 */
export const OPENAI_TIERS: TierSpec = {
  field: "service_tier",
  values: { flex: "flex", standard: "default", priority: "priority" },
  routes: /\/(?:chat\/completions|responses)$/,
  models: { flex: /^(?:gpt-5|o3|o4-mini)/, priority: /^(?:gpt-5|gpt-4\.1|gpt-4o|o3|o4-mini)/ },
  names: { flex: "flex", default: "standard", auto: "standard", priority: "priority" },
  served: { at: [["service_tier"], ["response", "service_tier"]] },
  refusals: [
    { tier: "flex", means: "rate_limit", status: [429], code: ["rate_limit_exceeded"] },
    { tier: "flex", means: "capacity", status: [429] },
  ],
  ratio: { flex: "batch", priority: 2 },
};

/**
 * Groq (console.groq.com/docs/flex-processing, /docs/service-tiers): `service_tier` `on_demand`
 * (the default), `flex` ("10x higher rate limits compared to on-demand", "Pricing matches the
 * on-demand tier"; refused at once with `498 capacity_exceeded`, already the row's capacity
 * refusal), `auto`, and `performance` (enterprise only: not asked for here). The answer's
 * `service_tier` (groq/groq-python `types/chat/chat_completion.py`: auto, on_demand, flex,
 * performance). Flex's limits are its own: its requests go to a limit key of their own.
 */
export const GROQ_TIERS: TierSpec = {
  field: "service_tier",
  values: { flex: "flex", standard: "on_demand" },
  routes: /\/chat\/completions$/,
  names: { flex: "flex", on_demand: "standard", auto: "standard", performance: "priority" },
  served: { at: [["service_tier"]] },
  refusals: [],
  own: ["flex"],
  ratio: { flex: 1 },
};

/**
 * Gemini (ai.google.dev/gemini-api/docs/optimization, /flex-inference, /priority-inference, and
 * the cookbook's `quickstarts/Inference_tiers.ipynb`): `service_tier` in a generateContent body
 * (`flex`, `priority`, `standard`; the REST sample writes `FLEX`, the SDK enum `SERVICE_TIER_FLEX`);
 * flex "50% discount", best-effort, "sheddable": it "fails with 503 errors"; priority "75% to 100%
 * more than standard" (2x here), downgraded to standard past its limits, which are 0.3x standard's
 * and "counted towards overall interactive traffic rate limits". The tier that served is in the
 * `x-gemini-service-tier` header. Most Gemini 2.5 and 3 models offer both. The OpenAI-compatible
 * route's acceptance of the field is not documented: it is not written there.
 */
export const GEMINI_TIERS: TierSpec = {
  field: "service_tier",
  // Its JSON takes the proto field's camelCase name too (protobuf's JSON mapping accepts both).
  aliases: ["serviceTier"],
  values: { flex: "flex", standard: "standard", priority: "priority" },
  routes: /\/models\/[^/:]+:(?:generateContent|streamGenerateContent)$/,
  models: { flex: /^gemini-(?:2\.5|3)/, priority: /^gemini-(?:2\.5|3)/ },
  names: { flex: "flex", standard: "standard", priority: "priority", unspecified: "standard" },
  served: { header: "x-gemini-service-tier", at: [] },
  refusals: [{ tier: "flex", means: "capacity", status: [503] }],
  ratio: { flex: 0.5, priority: 2 },
};

/**
 * Anthropic (platform.claude.com/docs/en/api/service-tiers): no flex; `service_tier` `auto` (the
 * default: Priority Tier where the organisation has committed capacity, else standard) or
 * `standard_only`. The answer's `usage.service_tier` (`standard`, `priority`, `batch`), in a
 * stream in `message_start`'s `message.usage`. Priority "pull[s] from both the Priority Tier
 * capacity and the regular rate limits": the key's windows. Priority is sold by commitment, at no
 * published price: charged at standard's unless PRICES gives one, and refused to a budgeted key.
 */
export const ANTHROPIC_TIERS: TierSpec = {
  field: "service_tier",
  values: { standard: "standard_only", priority: "auto" },
  routes: /\/v1\/messages$/,
  names: { standard_only: "standard", standard: "standard", auto: "standard", priority: "priority" },
  served: { at: [["usage", "service_tier"], ["message", "usage", "service_tier"]] },
  refusals: [],
  ratio: {},
};
