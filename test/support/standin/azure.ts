// Azure OpenAI: POST /openai/deployments/<deployment>/chat/completions (and /embeddings)
// ?api-version=..., credential in `api-key` (or an Entra token as Bearer). The bodies are OpenAI's;
// the model is the deployment's. Azure sends only remaining-requests and remaining-tokens (no limit
// or reset headers), and counts requests in 10 s windows: `burst: 1 / 6` makes the stand-in's
// request bucket hold the same.
import type { Dialect, ErrorReply, Refusal } from "./dialect.ts";
import type { LimitState } from "./limits.ts";
import { openai } from "./openai.ts";
import { hex } from "./reply.ts";

/** The deployment and endpoint of an Azure path (any prefix before /openai/deployments/). */
const PATH = /\/openai\/deployments\/([^/]+)(\/chat\/completions|\/embeddings)$/;

export function azurePath(path: string): { deployment: string; endpoint: string } | null {
  const m = PATH.exec(path.replace(/\/+$/, ""));
  return m ? { deployment: decodeURIComponent(m[1]!), endpoint: m[2]! } : null;
}

function error(status: number, code: string, message: string): ErrorReply {
  return { status, body: { error: { code, message } } };
}

const OPERATION: Record<string, string> = { "/chat/completions": "ChatCompletions_Create", "/embeddings": "Embeddings_Create" };

export const azure: Dialect = {
  name: "azure",
  endpoints: { "/chat/completions": openai.endpoints["/chat/completions"]!, "/embeddings": openai.endpoints["/embeddings"]! },

  credential(h) {
    if (typeof h["api-key"] === "string" && h["api-key"]) return h["api-key"];
    return /^Bearer\s+(.+)$/i.exec(h.authorization ?? "")?.[1]?.trim() || undefined;
  },

  check(_h, req, endpoint, query) {
    if (!query?.get("api-version")) return error(400, "BadRequest", "Missing required query parameter: api-version");
    const required = endpoint === "/embeddings" ? "input" : "messages";
    if (!(required in req.body)) return openai.invalid(`Missing required parameter: '${required}'.`);
    return null; // the body's model is not needed: the deployment names it
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
