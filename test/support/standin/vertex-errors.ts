// Vertex AI's refusals, in Google's error shape (`{"error": {"code", "message", "status"}}`,
// google.ts), for both publishers' routes: Vertex answers them itself, before a request reaches
// the model, so Claude's are Google's too (its 400s and its 529 are Anthropic's: vertex.ts).
//
// Sources:
// - 429, quota framework: "Quota exceeded for aiplatform.googleapis.com/<metric> with base model:
//   <base model>. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai."
//   with no details, as observed for Claude (`online_prediction_requests_per_base_model`,
//   cg-dot/vertexai-cf-workers#18) and Gemini (`generate_content_requests_per_minute_per_project_per_base_model`,
//   GoogleCloudPlatform/Open_Data_QnA#61), third party. The metric names per quota: the Vertex
//   quotas pages (cloud.google.com/vertex-ai/generative-ai/docs/quotas: "The requests per minute
//   (RPM) quota applies to a base model and all versions"; the Claude quotas page,
//   .../partner-models/claude/quotas: `online_prediction_{requests,input_tokens_per_minute,
//   output_tokens_per_minute}_per_base_model`, `global_` before them on the global endpoint). The
//   Gemini token metric's name is the stand-in's, by analogy with its requests metric.
// - 429, dynamic shared quota: "Resource exhausted, please try again later." (cloud.google.com/vertex-ai/generative-ai/docs/error-code-429,
//   "Pay-as-you-go"); which models run on it: .../docs/dynamic-shared-quota (Gemini 2.0 and later,
//   and the 1.5 -002 versions; Claude is on per-model quotas).
// - No rate-limit header and no retry-after on any of them: Vertex documents none.
// - 404 for a model the project cannot use, 403 BILLING_DISABLED for a project without billing
//   (cloud.google.com/apis/design/errors, ErrorInfo reasons; the wording as observed, third party).
import type { Refusal } from "./dialect.ts";
import { googleError } from "./google.ts";

export const DSQ_MESSAGE = "Resource exhausted, please try again later.";
const QUOTAS_URL = "https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai";

/** Gemini models on the dynamic shared quota: every one but 1.0, `gemini-pro` and the 1.5 `-001` versions. */
const DSQ = /^gemini-(?!1\.0|pro(?:-|$)|1\.5-(?:pro|flash)-001)/;

export type Publisher = "anthropic" | "google";

/** The quota metric a refusal of `kind` names for a publisher's model at `location`. */
function metric(publisher: Publisher, kind: Refusal["kind"], location: string): string {
  if (publisher === "google") {
    return kind === "requests" || kind === "dayRequests" ? "generate_content_requests_per_minute_per_project_per_base_model" : "generate_content_input_tokens_per_minute_per_base_model";
  }
  const what = kind === "requests" || kind === "dayRequests" ? "requests" : kind === "output" ? "output_tokens_per_minute" : "input_tokens_per_minute";
  return `${location === "global" ? "global_" : ""}online_prediction_${what}_per_base_model`;
}

/** The 429 Vertex answers a request over its project's limit for `model` (whose quotas count against `base`). */
export function vertexExhausted(publisher: Publisher, kind: Refusal["kind"], model: string, base: string, location: string) {
  if (publisher === "google" && DSQ.test(model)) return googleError(429, DSQ_MESSAGE);
  return googleError(429, `Quota exceeded for aiplatform.googleapis.com/${metric(publisher, kind, location)} with base model: ${base}. Please submit a quota increase request. ${QUOTAS_URL}.`);
}

/** A model the project has no access to (options.models), named by its full resource. */
export const vertexModelNotFound = (resource: string) =>
  googleError(404, `Publisher Model \`${resource}\` was not found or your project does not have access to it. Please ensure you are using a valid model version. For more information, see: https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions`);

/** A project without billing (options.quotaExhaustedKeys names projects here): Vertex has no credit balance, only billing. */
export const billingDisabled = (project: string) =>
  googleError(403, `This API method requires billing to be enabled. Please enable billing on project #${project} by visiting https://console.developers.google.com/billing/enable?project=${project} then retry. If you enabled billing for this project recently, wait a few minutes for the action to propagate to our systems and retry.`, [
    { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "BILLING_DISABLED", domain: "googleapis.com", metadata: { consumer: `projects/${project}`, service: "aiplatform.googleapis.com" } },
  ]);

export const vertexNotFound = () => googleError(404, "Requested entity was not found.");
export const vertexUnavailable = (message = "The service is currently unavailable.") => googleError(503, message);
export const vertexInternal = () => googleError(500, "Internal error encountered.");
