/**
 * @module DRAFT for issue 41, registered nowhere: the facts a Google Vertex AI row will carry, for
 * the lead to fold into the row format issue 40 produces. Each fact cites its source; "third party"
 * where only a client, a bug report or a blog says so. Three small readers (`vertexRoute`,
 * `baseModel`, `vertexHost`) show how the gateway reads these facts off a request and are tested
 * against the URLs the official clients really send (test/providers/drafts/vertex.test.ts,
 * test/node/vertex-clients.test.ts).
 */
import { MINUTE_MS, type LimitsSpec, type RefusalRule, type UsageSpec } from "../dialect";

// --- Credentials --------------------------------------------------------------------------------

/**
 * How a request to Vertex is authorised: `Authorization: Bearer <OAuth access token>` with the
 * cloud-platform scope (cloud.google.com/vertex-ai/docs/authentication). Two kinds reach the gateway:
 * - `service_account`: a pool member holds a service account key (the JSON key file); the gateway
 *   mints tokens from it (src/providers/auth/access-tokens.ts: the JWT bearer flow, a per-isolate
 *   cache, a token Vertex refuses with 401 dropped and minted again once). The key is a secret of the
 *   member, never shown. Needs `roles/aiplatform.user` on the member's project.
 * - `caller_token`: a caller's own access token (what `gcloud auth print-access-token` or any
 *   google-auth-library client mints, `ya29.`...) passed through untouched in `Authorization`. It
 *   lasts about an hour (`expires_in` 3599) and rotates: never part of a limit key (below).
 * A virtual key (`sgk-...`) arrives where a client puts its credential: as the Bearer token, or as
 * `x-goog-api-key` (express mode, below); the gateway replaces it with a member's minted token.
 */
export const CREDENTIALS = {
  service_account: { header: "authorization", scheme: "Bearer", minted: true, scope: "https://www.googleapis.com/auth/cloud-platform" },
  caller_token: { header: "authorization", scheme: "Bearer", minted: false },
  /** Where a virtual key may come: the Bearer token (every client), or express mode's API key header (@google/genai, @ai-sdk/google-vertex). */
  virtualKeyHeaders: ["authorization", "x-goog-api-key"],
} as const;

// --- Hosts, routes, where the model is -----------------------------------------------------------

/**
 * The host serves its location: `global` at aiplatform.googleapis.com, a region at
 * `{region}-aiplatform.googleapis.com`, the `us` and `eu` multi-regions at
 * `aiplatform.{us|eu}.rep.googleapis.com` (cloud.google.com/vertex-ai/generative-ai/docs/learn/locations;
 * the same three rules in @anthropic-ai/vertex-sdk's client.ts, @google/genai's ApiClient and
 * @ai-sdk/google-vertex's `getHost`). The location is also in the path, so the gateway picks the
 * host from the path (a pool member's location replacing the caller's).
 */
export function vertexHost(location: string): string {
  if (location === "global") return "https://aiplatform.googleapis.com";
  if (location === "us" || location === "eu") return `https://aiplatform.${location}.rep.googleapis.com`;
  return `https://${location}-aiplatform.googleapis.com`;
}

/**
 * The model routes, the model in the PATH (never in the body):
 *   POST /{v1|v1beta1}/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict | :streamRawPredict
 *   POST /{v1|v1beta1}/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent | :streamGenerateContent[?alt=sse]
 * Claude: cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude ("Request
 * predictions"); Gemini: .../docs/model-reference/inference. @google/genai sends `v1beta1` by
 * default on Vertex (its VERTEX_AI_API_DEFAULT_VERSION); the others `v1`. Express mode (an API key,
 * Gemini only) drops the project and location: `/v1/publishers/google/models/{model}:generateContent`
 * (cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode); the gateway puts its member's back.
 * Claude's `@version` is sent as is (`claude-sonnet-4-5@20250929`), by the SDKs too.
 */
const ROUTE = /^\/(v1|v1beta1)\/(?:projects\/([^/]+)\/locations\/([^/]+)\/)?publishers\/(anthropic|google)\/models\/([^/:]+):(rawPredict|streamRawPredict|generateContent|streamGenerateContent)$/;
const VERBS = { anthropic: ["rawPredict", "streamRawPredict"], google: ["generateContent", "streamGenerateContent"] } as const;

export interface VertexRoute {
  version: "v1" | "v1beta1";
  /** Absent on express mode's paths. */
  project: string | null;
  location: string | null;
  publisher: "anthropic" | "google";
  model: string;
  verb: string;
  /** Whether the answer streams: Claude's body says so (`stream`), Gemini's verb does. */
  streams: "body" | boolean;
}

/** The route a path (after the provider's prefix) names, or null for any other path. */
export function vertexRoute(path: string): VertexRoute | null {
  const m = ROUTE.exec(path);
  if (!m) return null;
  const publisher = m[4] as "anthropic" | "google";
  const verb = m[6]!;
  if (!(VERBS[publisher] as readonly string[]).includes(verb)) return null;
  const dec = (s: string | undefined) => (s === undefined ? null : decodeURIComponent(s));
  const streams = publisher === "anthropic" ? "body" : verb === "streamGenerateContent";
  return { version: m[1] as "v1" | "v1beta1", project: dec(m[2]), location: dec(m[3]), publisher, model: dec(m[5])!, verb, streams };
}

/**
 * The body's own facts: Claude's is Anthropic's Messages body without `model` and with
 * `anthropic_version` ("vertex-2023-10-16" in Google's and Anthropic's pages; @anthropic-ai/vertex-sdk
 * 1.x sends its API version, "2026-10-21", copied from its `anthropic-version` header). A body
 * rewritten from Anthropic's own API for a Vertex member drops `model` and sets the version; that is
 * the only difference (issue 41 item 6). Gemini's is the GenerateContentRequest, every turn with a
 * `role` (user or model).
 */
export const BODY = { anthropicVersion: "vertex-2023-10-16", drop: ["model"], anthropicVersionHeader: "anthropic-version" } as const;

// --- What scopes a limit ------------------------------------------------------------------------

/**
 * Vertex's quotas hold per project, per location and per base model: "The requests per minute (RPM)
 * quota applies to a base model and all versions, identifiers, and tuned versions of that model",
 * "for a given Google Cloud project and supported region" (cloud.google.com/vertex-ai/generative-ai/docs/quotas);
 * Claude's per-model quotas by `base_model` (`anthropic-claude-sonnet-4-5`), and, for Claude models
 * launched after 2026-05-26 on the global and multi-region endpoints, one quota per model LINEAGE
 * (`anthropic-claude-opus-4`, `-sonnet`, `-haiku`: every version of the lineage counts against it),
 * each location's bucket independent (.../partner-models/claude/quotas). Gemini 2.x and later run on
 * the dynamic shared quota: no fixed limit, a 429 when the shared pool is short (.../docs/dynamic-shared-quota).
 *
 * So a limit key is `vertex : <location>/<base model or lineage> : <hash of the project>`, built from
 * the path (a pool member's project and location for a member, the path's for a caller's own token):
 * - never the token's hash: a caller's token rotates hourly and a member's is re-minted every ~55
 *   minutes, and each would otherwise start a fresh limiter that knows nothing of the quota;
 * - two members in different locations are different keys, as are two projects;
 * - a caller's own token must PROVE the project before it shares the project's key: the path names
 *   any project, so an unproven token could otherwise queue in (and slow) another tenant's limiter.
 *   A token hash is proven for a project once Vertex answered it there with anything but 401/403 (a
 *   2xx, or a 429: Google checks a caller's permission before its quota), kept in memory for the
 *   token's life; an unproven token's first request goes alone on a key of its own (one in flight),
 *   then joins. A 401/403 never teaches the project's limiter anything.
 */
export const LIMIT_SCOPE = {
  from: "path",
  parts: ["project", "location", "baseModel"],
  never: ["token"],
  /**
   * Claude lineages on `global`, `us` and `eu`, for models launched after 2026-05-26 (the Claude
   * quotas page names the buckets `anthropic-claude-opus-4`, `-sonnet`, `-haiku`, `-mythos`, and
   * gives Opus 4.8 as the example). Only the model the page names is listed: add each as Google
   * lists it; a model missing here is keyed by its own base model, which over-separates (two
   * limiters for one bucket, each learning half of it from refusals) but never merges two quotas.
   */
  lineages: [{ models: /^claude-opus-4-8$/, base: "anthropic-claude-opus-4" }],
  lineageLocations: ["global", "us", "eu"],
} as const;

/**
 * The base model a request's quota counts against: a Claude version's `anthropic-<id without
 * @version>` (the quota dimension Vertex names in its 429s: "with base model:
 * anthropic-claude-3-5-sonnet", cg-dot/vertexai-cf-workers#18, third party) or its lineage where one
 * applies; a Gemini version's id without its `-00N` (gemini-2.0-flash-001 counts as gemini-2.0-flash).
 */
export function baseModel(publisher: "anthropic" | "google", model: string, location: string): string {
  if (publisher === "google") return model.replace(/-\d{3}$/, "");
  const id = model.replace(/@.*$/, "");
  const lineage = (LIMIT_SCOPE.lineageLocations as readonly string[]).includes(location) ? LIMIT_SCOPE.lineages.find((l) => l.models.test(id)) : undefined;
  return lineage?.base ?? `anthropic-${id}`;
}

// --- Limits and refusals ------------------------------------------------------------------------

/**
 * No rate-limit headers and no retry-after, on any answer (none documented; the stand-in plays
 * none); a 429's body carries no RetryInfo either (observed bodies: `{"error": {"code": 429,
 * "message", "status": "RESOURCE_EXHAUSTED"}}`, cg-dot/vertexai-cf-workers#18, third party). Every
 * window is learned from refusals over a minute, as the headerless rows already are.
 */
export const LIMITS: LimitsSpec = { requests: [], tokens: [], hints: [], body: ["error-details"], refusalPeriodMs: MINUTE_MS };

/**
 * What each refusal means (cloud.google.com/vertex-ai/generative-ai/docs/error-code-429: the quota
 * framework's "Quota exceeded for aiplatform.googleapis.com/<metric> with base model: <model>" and the
 * dynamic shared quota's "Resource exhausted, please try again later.", both 429 RESOURCE_EXHAUSTED;
 * cloud.google.com/apis/design/errors for ErrorInfo reasons):
 * - 429 RESOURCE_EXHAUSTED: rate limit, both kinds (the quota's and the shared pool's);
 * - 529 `overloaded_error` (Claude, Anthropic's body) and 503 UNAVAILABLE: capacity, retried, never cut;
 * - 401 UNAUTHENTICATED: for a member's minted token, drop it and mint once more before anything
 *   (ACCESS_TOKEN_EXPIRED is routine near expiry); a second 401 with a fresh token is a bad key. For
 *   a caller's own token, the caller's answer as is (the caller's token, never a member out);
 * - 403 PERMISSION_DENIED with IAM_PERMISSION_DENIED, BILLING_DISABLED, SERVICE_DISABLED,
 *   ACCESS_TOKEN_SCOPE_INSUFFICIENT, CONSUMER_SUSPENDED: the member cannot be used (out, with the reason);
 * - 400 (a bad body, a bad `anthropic_version`, an empty `contents`) and 404 (a model the project
 *   has no access to): fatal, returned as is.
 * A daily quota on Vertex (none documented for these models) would come as a QuotaFailure `...PerDay...`: spent.
 */
export const REFUSALS: readonly RefusalRule[] = [
  { means: "spent", status: [429], quotaId: /perday/i, evidence: "daily_quota" },
  { means: "rate_limit", status: [429], code: ["resource_exhausted"] },
  { means: "capacity", status: [529], code: ["overloaded_error"] },
  { means: "capacity", status: [503] },
  { means: "bad_key", status: [403], reason: ["IAM_PERMISSION_DENIED", "BILLING_DISABLED", "SERVICE_DISABLED", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "CONSUMER_SUSPENDED"] },
];

/** The 401 reasons that mean "mint again" for a member's token, before any other reading. */
export const REMINT_ON = { status: 401, reasons: ["ACCESS_TOKEN_EXPIRED", "ACCESS_TOKEN_TYPE_UNSUPPORTED"] } as const;

// --- Usage --------------------------------------------------------------------------------------

/**
 * Claude: Anthropic's `usage` in the answer, `message.usage` in `message_start` and the cumulative
 * `usage.output_tokens` in `message_delta`; Gemini: `usageMetadata` in the answer and in every
 * chunk (counts so far, the last final), with `trafficType` ON_DEMAND or PROVISIONED_THROUGHPUT
 * (the inference reference's UsageMetadata). Both always reported, streams included: nothing to ask.
 * These are paths the meter already reads (usage/tokens.ts USAGE_AT).
 */
export const USAGE: UsageSpec = { at: [["usage"], ["usageMetadata"], ["message", "usage"]], ask: { kind: "none" } };

// --- Prices -------------------------------------------------------------------------------------

/** USD per million tokens; `cached` a cache read, `cacheWrite` a 5-minute cache write; `context` and `maxOutput` in tokens. */
export interface DraftPrice {
  input: number;
  output: number;
  cached?: number;
  cacheWrite?: number;
  context: number;
  maxOutput: number;
  /** Over this many prompt tokens the dearer band applies (Gemini 2.5 Pro: 200K). */
  band?: { above: number; input: number; output: number; cached?: number };
  /** A regional (or multi-region) endpoint's price over the global one's. */
  regional?: number;
}

/** When the figures below were read, and from where. */
export const PRICES_READ = "2026-11-23";

/**
 * Claude on Vertex, by Vertex model id: the prices of Anthropic's pricing page
 * (platform.claude.com/docs/en/about-claude/pricing, read 2026-11-23: Vertex bills Claude at these
 * list prices), "Regional endpoints include a 10% pricing premium over global endpoints" for Claude
 * Sonnet 4.5 and every later model, older models keeping their pricing (platform.claude.com/docs/en/
 * build-with-claude/claude-on-vertex-ai, "Global vs regional endpoints"); the Vertex ids from that
 * page's table; context and max output from each model's overview page (platform.claude.com/docs/en/
 * models/<model>/overview) or the models overview table. Google's own pricing page
 * (cloud.google.com/vertex-ai/generative-ai/pricing, "Anthropic's Claude models") could not be read
 * from here: check these against it before they are registered. Opus 4.7 and 4.8's context and
 * output are Opus 4.6's (their overview pages were not read; a third party, clauder-navi.com, gives
 * 1M). Newer ids (Opus 5 and 5.5, Sonnet 5 and 5.5, Haiku 5.5, Fable 5 and 5.1) are left out: their
 * Vertex ids were not on the page read; PRICES covers them until then.
 */
export const CLAUDE_PRICES: Readonly<Record<string, DraftPrice>> = {
  "claude-opus-4-8": { input: 5, output: 25, cached: 0.5, cacheWrite: 6.25, context: 1_000_000, maxOutput: 128_000, regional: 1.1 },
  "claude-opus-4-7": { input: 5, output: 25, cached: 0.5, cacheWrite: 6.25, context: 1_000_000, maxOutput: 128_000, regional: 1.1 },
  "claude-opus-4-6": { input: 5, output: 25, cached: 0.5, cacheWrite: 6.25, context: 1_000_000, maxOutput: 128_000, regional: 1.1 },
  "claude-sonnet-4-6": { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75, context: 1_000_000, maxOutput: 128_000, regional: 1.1 },
  "claude-opus-4-5@20251101": { input: 5, output: 25, cached: 0.5, cacheWrite: 6.25, context: 200_000, maxOutput: 64_000, regional: 1.1 },
  "claude-sonnet-4-5@20250929": { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75, context: 200_000, maxOutput: 64_000, regional: 1.1 },
  "claude-haiku-4-5@20251001": { input: 1, output: 5, cached: 0.1, cacheWrite: 1.25, context: 200_000, maxOutput: 64_000, regional: 1.1 },
  "claude-opus-4-1@20250805": { input: 15, output: 75, cached: 1.5, cacheWrite: 18.75, context: 200_000, maxOutput: 32_000 },
  "claude-opus-4@20250514": { input: 15, output: 75, cached: 1.5, cacheWrite: 18.75, context: 200_000, maxOutput: 32_000 },
  "claude-sonnet-4@20250514": { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75, context: 200_000, maxOutput: 64_000 },
  "claude-3-5-haiku@20241022": { input: 0.8, output: 4, cached: 0.08, cacheWrite: 1, context: 200_000, maxOutput: 8_192 },
  "claude-3-haiku@20240307": { input: 0.25, output: 1.25, cached: 0.03, cacheWrite: 0.3, context: 200_000, maxOutput: 4_096 },
};

/**
 * Gemini on Vertex, by model id (a `-00N` version is priced as its base). NOT read from Google's
 * pricing page (cloud.google.com/vertex-ai/generative-ai/pricing is not in the stored pages here):
 * these are the list prices as third parties quote that page (tokenmix.ai 2026-04, deploybase.ai
 * 2025-04 for 2.5 Pro's $1.25 / $10 and its 200K band) and, where they agree with it, the Gemini
 * API's (src/usage/prices.ts), whose Vertex prices Google keeps equal for the 2.5 family; Gemini
 * 2.0 Flash is dearer on Vertex ($0.15 / $0.60) than on the Gemini API. Context and max output as
 * the models' Vertex pages last gave them to me (1,048,576 in; 65,535 out for 2.5, 8,192 for 2.0),
 * not read here either. Check every figure against Google's pages before registering it.
 */
export const GEMINI_PRICES: Readonly<Record<string, DraftPrice>> = {
  "gemini-2.5-pro": { input: 1.25, output: 10, cached: 0.125, context: 1_048_576, maxOutput: 65_535, band: { above: 200_000, input: 2.5, output: 15, cached: 0.25 } },
  "gemini-2.5-flash": { input: 0.3, output: 2.5, cached: 0.03, context: 1_048_576, maxOutput: 65_535 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cached: 0.01, context: 1_048_576, maxOutput: 65_535 },
  "gemini-2.0-flash": { input: 0.15, output: 0.6, cached: 0.0375, context: 1_048_576, maxOutput: 8_192 },
  "gemini-2.0-flash-lite": { input: 0.075, output: 0.3, context: 1_048_576, maxOutput: 8_192 },
};

/** The price of a Vertex model id at a location: the table's, times the regional premium away from `global`. */
export function vertexPrice(publisher: "anthropic" | "google", model: string, location: string): DraftPrice | null {
  const table = publisher === "anthropic" ? CLAUDE_PRICES : GEMINI_PRICES;
  const p = table[model] ?? table[model.replace(/-\d{3}$/, "")];
  if (!p) return null;
  const k = location !== "global" && p.regional ? p.regional : 1;
  if (k === 1) return p;
  const times = (n: number | undefined) => (n === undefined ? undefined : Math.round(n * k * 1e6) / 1e6);
  return { ...p, input: times(p.input)!, output: times(p.output)!, cached: times(p.cached), cacheWrite: times(p.cacheWrite) };
}
