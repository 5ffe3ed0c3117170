// Google Vertex AI's model routes, for Claude (publisher `anthropic`) and Gemini (publisher `google`):
//   POST /v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict | :streamRawPredict
//   POST /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent | :streamGenerateContent[?alt=sse]
// under `v1` or `v1beta1` (@google/genai's default on Vertex), after any prefix. Real Vertex serves
// `global` at aiplatform.googleapis.com and a region at {region}-aiplatform.googleapis.com; the
// stand-in takes the location from the path, and when the prefix names such a host
// (`<stand-in>/us-east5-aiplatform.googleapis.com/v1/...`, a gateway's host template pointed here)
// refuses a host that is not the location's.
//
// What it plays, with its sources:
// - Claude: the body is Anthropic's Messages body with `anthropic_version: "vertex-2023-10-16"` and
//   no `model` (the path names it); answers and SSE events are Anthropic's, usage included
//   (cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude, "Request predictions";
//   docs.anthropic.com/en/api/claude-on-vertex-ai). @anthropic-ai/vertex-sdk 1.x copies its
//   `anthropic-version` header into the body instead (`"2026-10-21"`, the API version it is built
//   for: its client.ts `#adaptRequest`), so a dated version from 2026-10-21 on is taken too; the
//   first-party `2023-06-01` is refused (a third party saw it fail: clawvisor/clawvisor#156). Its
//   529 `overloaded_error` is Anthropic's (issue 41; Anthropic's errors page); its 400s are
//   Anthropic's, their wording the stand-in's.
// - Gemini: Vertex's GenerateContentResponse with `usageMetadata` (its `trafficType` ON_DEMAND),
//   a stream as SSE with `?alt=sse` and one JSON array without it (cloud.google.com/vertex-ai/
//   generative-ai/docs/model-reference/inference); an empty `contents` and a turn without a valid
//   role are 400s worded as observed (third party).
// - Credential: `Authorization: Bearer` with an access token the stand-in's own token endpoint
//   issued (google-oauth.ts); the account must hold a role in the path's project.
// - Limits per project, location and base model (the quotas pages, vertex-errors.ts): the
//   account a request counts against is its project, scoped to its location and base model; no
//   rate-limit headers and no retry-after; a 429 names the quota or, on the dynamic shared quota,
//   says only "Resource exhausted, please try again later.".
import type { Dialect, EndpointResult, ErrorReply, SseEvent } from "./dialect.ts";
import { anthropic } from "./anthropic.ts";
import { gemini } from "./gemini.ts";
import { googleError } from "./google.ts";
import { missingCredential } from "./google-oauth.ts";
import { billingDisabled, vertexExhausted, vertexInternal, vertexModelNotFound, vertexNotFound, vertexUnavailable, type Publisher } from "./vertex-errors.ts";

export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";
/** The first Anthropic API version @anthropic-ai/vertex-sdk sends as `anthropic_version` (1.0.0). */
const DATED_FROM = "2026-10-21";

/** Vertex's own version, or a dated Anthropic API version an SDK of today sends. */
const acceptedVersion = (v: unknown) => v === VERTEX_ANTHROPIC_VERSION || (typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v) && v >= DATED_FROM);

const PATH = /^(.*?)\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(anthropic|google)\/models\/([^/:]+):(rawPredict|streamRawPredict|generateContent|streamGenerateContent)$/;
const VERBS: Record<Publisher, string[]> = { anthropic: ["rawPredict", "streamRawPredict"], google: ["generateContent", "streamGenerateContent"] };
/** `aiplatform.googleapis.com` or `{region}-aiplatform.googleapis.com` as a path segment of the prefix. */
const HOST = /(?:^|\/)(?:([a-z0-9-]+)-)?aiplatform\.googleapis\.com(?:\/|$)/;

export interface VertexRoute {
  publisher: Publisher;
  project: string;
  location: string;
  model: string;
  /** The base model its quotas count against. */
  base: string;
  endpoint: string;
  /** The path says whether it streams (Gemini's streamGenerateContent); Claude's body says it. */
  stream?: boolean;
  /** The location the prefix's host serves, when the prefix names one. */
  hostLocation?: string;
}

/**
 * The base model a version's quota counts against: Claude's `claude-3-5-sonnet@20240620` is
 * `anthropic-claude-3-5-sonnet` (the quota dimension as Vertex names it); Gemini's
 * `gemini-2.0-flash-001` is `gemini-2.0-flash`.
 */
export function baseModel(publisher: Publisher, model: string): string {
  return publisher === "anthropic" ? `anthropic-${model.replace(/@.*$/, "")}` : model.replace(/-\d{3}$/, "");
}

export function vertexPath(path: string, query: URLSearchParams): VertexRoute | null {
  const m = PATH.exec(path.replace(/\/+$/, ""));
  if (!m) return null;
  const [, prefix, , project, location, publisher, rawModel, verb] = m as unknown as [string, string, string, string, string, Publisher, string, string];
  if (!VERBS[publisher].includes(verb)) return null;
  const model = decodeURIComponent(rawModel);
  const host = HOST.exec(prefix);
  const route: VertexRoute = { publisher, project: decodeURIComponent(project), location: decodeURIComponent(location), model, base: baseModel(publisher, model), endpoint: `:${verb}` };
  if (host) route.hostLocation = host[1] ?? "global";
  if (verb === "streamGenerateContent") {
    route.stream = true;
    if (query.get("alt") === "sse") route.endpoint = ":streamGenerateContent?alt=sse";
  } else if (verb === "generateContent") route.stream = false;
  return route;
}

const anthropicError = (status: number, type: string, message: string): ErrorReply => ({ status, body: { type: "error", error: { type, message } } });

/** Vertex's Gemini answers say how they were served: `usageMetadata.trafficType` ON_DEMAND (pay as you go). */
function onDemand(result: EndpointResult): EndpointResult {
  const stamp = (o: unknown) => {
    const u = (o as { usageMetadata?: Record<string, unknown> } | null)?.usageMetadata;
    if (u) u.trafficType = "ON_DEMAND";
  };
  if ("json" in result) (Array.isArray(result.json) ? result.json : [result.json]).forEach(stamp);
  else for (const e of [...result.stream.head, ...result.stream.deltas, ...result.stream.tail] as SseEvent[]) stamp(e.data);
  return result;
}

const RPC: Record<string, string> = {
  ":rawPredict": "RawPredict", ":streamRawPredict": "StreamRawPredict",
  ":generateContent": "GenerateContent", ":streamGenerateContent": "StreamGenerateContent", ":streamGenerateContent?alt=sse": "StreamGenerateContent",
};

/** The dialect of one Vertex route: its refusals name its project, location and model. */
export function vertexDialect(v: VertexRoute): Dialect {
  const resource = `projects/${v.project}/locations/${v.location}/publishers/${v.publisher}/models/${v.model}`;
  const method = `google.cloud.aiplatform.v1.PredictionService.${RPC[v.endpoint] ?? "Predict"}`;
  const claude = v.publisher === "anthropic";
  const invalid = (message: string): ErrorReply => (claude ? anthropicError(400, "invalid_request_error", message) : { status: 400, body: googleError(400, message) });
  const messages = anthropic.endpoints["/messages"]!;
  return {
    name: claude ? "vertex-anthropic" : "vertex-gemini",
    host: v.location === "global" ? "aiplatform.googleapis.com" : `${v.location}-aiplatform.googleapis.com`,
    scope: "model", // per project (the account), location (the resource) and base model: route.ts keys it so
    retryHeaders: "none",
    sseEol: claude ? "\n" : "\r\n",
    google: { resource, method },
    endpoints: claude
      ? { ":rawPredict": messages, ":streamRawPredict": messages }
      : Object.fromEntries(Object.entries(gemini.endpoints).map(([e, f]) => [e, (req, r) => onDemand(f(req, r))])),
    reportsStreamUsage: () => true, // Anthropic's events and Gemini's chunks always carry it
    ...(claude && { imageTokens: anthropic.imageTokens }),
    // Its tokens quotas, per base model: Claude's input and output per minute apart
    // (`online_prediction_{input,output}_tokens_per_minute_per_base_model`, partner-models/claude/quotas),
    // Gemini's input alone (`generate_content_input_tokens_per_minute_per_base_model`, /docs/quotas).
    ...(claude ? { tokensApart: true as const } : { inputTpm: true as const }),

    credential: (h) => /^Bearer\s+(.+)$/i.exec(h.authorization ?? "")?.[1]?.trim() || undefined,

    check(_h, req) {
      if (v.hostLocation !== undefined && v.hostLocation !== v.location) {
        return { status: 400, body: googleError(400, `Location ${v.location} is not served at ${v.hostLocation === "global" ? "" : `${v.hostLocation}-`}aiplatform.googleapis.com.`) };
      }
      if (claude) {
        const version = req.body.anthropic_version;
        if (version === undefined) return invalid("anthropic_version: Field required");
        if (!acceptedVersion(version)) return invalid(`anthropic_version: Input should be '${VERTEX_ANTHROPIC_VERSION}'`);
        for (const field of ["messages", "max_tokens"]) if (!(field in req.body)) return invalid(`${field}: Field required`);
        return null;
      }
      const contents = req.body.contents;
      if (!Array.isArray(contents) || contents.length === 0) {
        return invalid("Unable to submit request because it has an empty contents field. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini");
      }
      if (contents.some((c) => !["user", "model"].includes((c as { role?: unknown } | null)?.role as string))) return invalid("Please use a valid role: user, model.");
      return null;
    },

    requestId: () => ({}),
    stamp: (body) => body,
    limitHeaders: () => ({}),
    unauthorized: () => missingCredential(method),
    invalid,
    notFound: () => ({ status: 404, body: vertexNotFound() }),
    unknownModel: () => ({ status: 404, body: vertexModelNotFound(resource) }),
    identity: () => ({}),
    rateLimited: (r) => ({ status: 429, body: vertexExhausted(v.publisher, r.kind, v.model, v.base, v.location) }),
    tooManyConcurrent: () => ({ status: 429, body: vertexExhausted(v.publisher, "requests", v.model, v.base, v.location) }),
    quotaExhausted: () => ({ status: 403, body: billingDisabled(v.project) }),
    fault(status) {
      if (status === 529) return claude ? anthropicError(529, "overloaded_error", "Overloaded") : { status: 503, body: vertexUnavailable("The model is overloaded. Please try again later.") };
      if (status === 500) return { status: 500, body: vertexInternal() };
      return { status: 503, body: vertexUnavailable() };
    },
  };
}

/** Standing dialects for callers that name one without a path (the simulator): a route in us-central1 of project `standin`. */
export const vertexAnthropic = vertexDialect(vertexPath("/v1/projects/standin/locations/us-central1/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict", new URLSearchParams())!);
export const vertexGemini = vertexDialect(vertexPath("/v1/projects/standin/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent", new URLSearchParams())!);
