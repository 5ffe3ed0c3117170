// Azure OpenAI: POST /openai/deployments/<deployment>/chat/completions (and /embeddings)
// ?api-version=..., or the v1 surface /openai/v1/chat/completions (the deployment in the body's
// `model`); credential in `api-key` (or an Entra token as Bearer). The bodies are OpenAI's; the
// model is the deployment's.
//
// What it plays, with its sources:
// - Successes carry x-ratelimit-remaining-requests and -remaining-tokens only: no limit, no reset
//   (Azure/azure-rest-api-specs#26884; EvolvingPrograms/oaib#11, third party).
// - A 429 carries retry-after and retry-after-ms (the openai SDK reads retry-after-ms first;
//   Azure's own "Manage quota" page tells callers to honour the retry-after headers).
// - Limits hold per deployment (per resource and deployment here: a path prefix
//   `/azure/<resource>/openai/...` names the resource), RPM checked over 1 s or 10 s windows
//   ("Azure OpenAI quotas and limits" / "Manage quota", Microsoft Learn: "if Azure OpenAI is
//   monitoring request rate on 1-second intervals, rate limiting will occur for a 600-RPM deployment
//   if more than 10 requests are received during each 1-second period"): `burst: 1 / 60` (1 s) or
//   `1 / 6` (10 s) makes the request bucket hold the same. max_tokens is counted at admission
//   (same page), as the stand-in's token buckets do.
// - `stream_options` exists from api-version 2024-09-01-preview (GA 2024-10-21); an older version
//   answers 400 "Unrecognized request argument supplied: stream_options" (the REST reference's
//   api-version history; the message as clients meet it, e.g. third-party stubs of Azure).
import { chat, embeddings, openai } from "./openai.ts";
import type { Dialect, ErrorReply, Refusal } from "./dialect.ts";
import type { LimitState } from "./limits.ts";
import { hex } from "./reply.ts";

/** The deployment path of Azure, any prefix before /openai/deployments/ (its last segment the resource, when there is one). */
const DEPLOYMENT = /(?:^|\/)([^/]*)\/openai\/deployments\/([^/]+)(\/chat\/completions|\/embeddings)$/;
/** The v1 surface, only under the /azure/<resource> prefix (an unprefixed /openai/v1/... is OpenAI's, as it always was). */
const V1 = /^\/azure\/([^/]+)\/openai\/v1(\/chat\/completions|\/embeddings)$/;

export interface AzurePath {
  endpoint: string;
  /** The path's deployment; the v1 surface names it in the body instead. */
  deployment?: string;
  resource: string;
}

export function azurePath(path: string): AzurePath | null {
  const p = path.replace(/\/+$/, "");
  const v1 = V1.exec(p);
  if (v1) return { resource: v1[1]!, endpoint: v1[2]! };
  const m = DEPLOYMENT.exec(p);
  return m ? { resource: m[1] ?? "", deployment: decodeURIComponent(m[2]!), endpoint: m[3]! } : null;
}

/** The first api-version that accepts stream_options (the preview; GA 2024-10-21 follows it). */
export const STREAM_OPTIONS_FROM = "2024-09-01-preview";

/** Whether this api-version accepts stream_options: dated versions compare by date; the v1 surface's "preview" and "v1" do. */
export function acceptsStreamOptions(apiVersion: string | null): boolean {
  const date = /^\d{4}-\d{2}-\d{2}/.exec(apiVersion ?? "")?.[0];
  return date === undefined || date >= STREAM_OPTIONS_FROM.slice(0, 10);
}

function error(status: number, code: string, message: string): ErrorReply {
  return { status, body: { error: { code, message } } };
}

const OPERATION: Record<string, string> = { "/chat/completions": "ChatCompletions_Create", "/embeddings": "Embeddings_Create" };

export const azure: Dialect = {
  name: "azure",
  host: "myresource.openai.azure.com",
  scope: "model", // the deployment: handle.ts keys the account by resource and deployment
  retryHeaders: "seconds+ms",
  endpoints: { "/chat/completions": chat, "/embeddings": embeddings },
  reportsStreamUsage: openai.reportsStreamUsage,

  credential(h) {
    if (typeof h["api-key"] === "string" && h["api-key"]) return h["api-key"];
    return /^Bearer\s+(.+)$/i.exec(h.authorization ?? "")?.[1]?.trim() || undefined;
  },

  check(_h, req, endpoint, query, path = "") {
    const version = query?.get("api-version") ?? null;
    // The v1 surface (model in the body) takes "preview", "v1" or no api-version; the deployment paths need one.
    if (!version && !V1.test(path.replace(/\/+$/, ""))) return error(400, "BadRequest", "Missing required query parameter: api-version");
    const required = endpoint === "/embeddings" ? "input" : "messages";
    if (!(required in req.body)) return openai.invalid(`Missing required parameter: '${required}'.`);
    if ("stream_options" in req.body && !acceptsStreamOptions(version)) {
      return { status: 400, body: { error: { message: "Unrecognized request argument supplied: stream_options", type: "invalid_request_error", param: null, code: null } } };
    }
    return null;
  },

  requestId: () => ({ "apim-request-id": crypto.randomUUID(), "x-request-id": hex(32), "x-ms-region": "Sweden Central" }),

  stamp: (body) => body,

  limitHeaders(states: LimitState[]) {
    const out: Record<string, string> = {};
    for (const s of states) if (s.kind === "requests" || s.kind === "tokens") out[`x-ratelimit-remaining-${s.kind}`] = String(s.remaining);
    return out;
  },

  unauthorized: () =>
    error(401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."),

  invalid: openai.invalid,

  notFound: () => error(404, "404", "Resource not found"),
  unknownModel: () => error(404, "DeploymentNotFound", "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."),
  identity: () => ({}),

  rateLimited(r: Refusal, _model, _org, endpoint = "/chat/completions") {
    const what = r.kind === "requests" ? "call rate limit" : "token rate limit";
    const wait = Number.isFinite(r.waitMs) ? ` Please retry after ${Math.max(1, Math.ceil(r.waitMs / 1000))} seconds.` : "";
    return error(429, "429", `Requests to the ${OPERATION[endpoint] ?? "ChatCompletions_Create"} Operation under Azure OpenAI API have exceeded ${what} of your current OpenAI S0 pricing tier.${wait} Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit.`);
  },

  tooManyConcurrent: () =>
    error(429, "429", "Requests to the ChatCompletions_Create Operation under Azure OpenAI API have exceeded call rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second."),

  // Kept as OpenAI's insufficient_quota, so a member out of quota looks the same behind either URL.
  quotaExhausted: openai.quotaExhausted,

  fault: openai.fault,
};
