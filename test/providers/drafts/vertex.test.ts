// The Vertex draft row (src/providers/drafts/vertex.ts), registered nowhere yet: its readers on the
// paths the official clients send (the same paths test/node/vertex-clients.test.ts records), the
// limit scope a rotating token never enters, and its refusal rules read by today's classifier on
// the bodies Vertex sends (sources in the draft and in the stand-in's vertex-errors.ts).
import { describe, expect, it } from "vitest";
import { refusal } from "../../../src/policy/classify";
import type { Dialect } from "../../../src/providers/dialect";
import { baseModel, CLAUDE_PRICES, GEMINI_PRICES, LIMITS, REFUSALS, USAGE, vertexHost, vertexPrice, vertexRoute } from "../../../src/providers/drafts/vertex";
import { usageIn } from "../../../src/usage/tokens";

const row: Dialect = { name: "vertex", limits: LIMITS, refusals: REFUSALS, usage: USAGE, scope: {} };
const meaning = (status: number, body: unknown) => refusal(status, body, row);
const google = (code: number, status: string, message: string, details?: object[]) => ({ error: { code, message, status, ...(details ? { details } : {}) } });
const info = (reason: string) => ({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "googleapis.com", metadata: {} });

describe("the route, as each client sends it", () => {
  it("@anthropic-ai/vertex-sdk: v1, the @version unencoded, the verb by stream", () => {
    expect(vertexRoute("/v1/projects/p-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict")).toEqual({
      version: "v1", project: "p-1", location: "us-east5", publisher: "anthropic", model: "claude-sonnet-4-5@20250929", verb: "streamRawPredict", streams: "body",
    });
  });

  it("@google/genai: v1beta1 with project and location; express mode without them", () => {
    expect(vertexRoute("/v1beta1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent")).toMatchObject({ version: "v1beta1", location: "global", publisher: "google", streams: true });
    expect(vertexRoute("/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent")).toMatchObject({ project: null, location: null, model: "gemini-2.5-flash", streams: false });
  });

  it("refuses what is not a model route, and a verb of the other publisher", () => {
    for (const p of [
      "/v1/projects/p/locations/l/publishers/anthropic/models/claude:generateContent",
      "/v1/projects/p/locations/l/publishers/google/models/gemini:rawPredict",
      "/v1/projects/p/locations/l/publishers/meta/models/llama:rawPredict",
      "/v1/projects/p/locations/l/endpoints/123:predict",
      "/v1/projects/p/locations/l/publishers/google/models/../../x:generateContent",
      "/v2/projects/p/locations/l/publishers/google/models/gemini:generateContent",
    ]) expect(vertexRoute(p)).toBeNull();
  });

  it("the host is the location's: global, a region, a multi-region", () => {
    expect([vertexHost("global"), vertexHost("us-east5"), vertexHost("eu")]).toEqual(["https://aiplatform.googleapis.com", "https://us-east5-aiplatform.googleapis.com", "https://aiplatform.eu.rep.googleapis.com"]);
  });
});

describe("the limit scope: project, location, base model (never the token)", () => {
  it("a version counts against its base model; Claude's lineage on global and multi-region endpoints", () => {
    expect(baseModel("google", "gemini-2.0-flash-001", "us-central1")).toBe("gemini-2.0-flash");
    expect(baseModel("google", "gemini-2.5-pro", "global")).toBe("gemini-2.5-pro");
    expect(baseModel("anthropic", "claude-3-5-sonnet@20240620", "us-east5")).toBe("anthropic-claude-3-5-sonnet");
    expect(baseModel("anthropic", "claude-sonnet-4-6", "us-east5")).toBe("anthropic-claude-sonnet-4-6");
    expect(baseModel("anthropic", "claude-opus-4-8", "global")).toBe("anthropic-claude-opus-4");
    expect(baseModel("anthropic", "claude-opus-4-8", "us")).toBe("anthropic-claude-opus-4");
    expect(baseModel("anthropic", "claude-opus-4-8", "us-east5")).toBe("anthropic-claude-opus-4-8");
  });
});

describe("refusals, read by today's classifier", () => {
  it("429 RESOURCE_EXHAUSTED, the quota's and the shared pool's: rate limits", () => {
    const quota = google(429, "RESOURCE_EXHAUSTED", "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: anthropic-claude-3-5-sonnet. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.");
    expect(meaning(429, quota)).toEqual({ cls: "rate_limit", evidence: null });
    expect(meaning(429, google(429, "RESOURCE_EXHAUSTED", "Resource exhausted, please try again later."))).toEqual({ cls: "rate_limit", evidence: null });
  });

  it("Claude's 529 and a 503: capacity, never a cut", () => {
    expect(meaning(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }).cls).toBe("capacity");
    expect(meaning(503, google(503, "UNAVAILABLE", "The service is currently unavailable.")).cls).toBe("capacity");
  });

  it("403s that say the member cannot be used, with their reason; a bare 403 or a 401 takes nobody out", () => {
    expect(meaning(403, google(403, "PERMISSION_DENIED", "This API method requires billing to be enabled.", [info("BILLING_DISABLED")]))).toEqual({ cls: "fatal", evidence: "billing_disabled" });
    expect(meaning(403, google(403, "PERMISSION_DENIED", "Permission 'aiplatform.endpoints.predict' denied", [info("IAM_PERMISSION_DENIED")])).evidence).toBe("iam_permission_denied");
    expect(meaning(403, google(403, "PERMISSION_DENIED", "denied"))).toEqual({ cls: "fatal", evidence: null });
    expect(meaning(401, google(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", [info("ACCESS_TOKEN_EXPIRED")]))).toEqual({ cls: "fatal", evidence: null });
  });

  it("400 and 404: fatal, returned as is", () => {
    expect(meaning(400, { type: "error", error: { type: "invalid_request_error", message: "anthropic_version: Field required" } }).cls).toBe("fatal");
    expect(meaning(404, google(404, "NOT_FOUND", "Publisher Model `projects/p/locations/l/publishers/google/models/x` was not found")).cls).toBe("fatal");
  });
});

describe("usage, where each publisher puts it", () => {
  it("Anthropic's usage and message_start's message.usage; Gemini's usageMetadata", () => {
    expect(usageIn({ usage: { input_tokens: 12, output_tokens: 5 } }, USAGE.at)).toMatchObject({ input: 12, output: 5 });
    expect(usageIn({ type: "message_start", message: { usage: { input_tokens: 12, output_tokens: 1 } } }, USAGE.at)).toMatchObject({ input: 12, output: 1 });
    expect(usageIn({ usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, totalTokenCount: 13, trafficType: "ON_DEMAND" } }, USAGE.at)).toMatchObject({ input: 9, output: 4 });
  });
});

describe("prices", () => {
  it("every row has a context window and a max output within it", () => {
    for (const [id, p] of Object.entries({ ...CLAUDE_PRICES, ...GEMINI_PRICES })) {
      expect(p.maxOutput, id).toBeGreaterThan(0);
      expect(p.maxOutput, id).toBeLessThanOrEqual(p.context);
      expect(p.output, id).toBeGreaterThan(p.input);
      if (p.cached !== undefined) expect(p.cached, id).toBeLessThan(p.input);
    }
  });

  it("a regional endpoint costs 10% more than global for Sonnet 4.5 and later, the same for older models; a -00N version is its base's", () => {
    expect(vertexPrice("anthropic", "claude-sonnet-4-5@20250929", "global")).toMatchObject({ input: 3, output: 15 });
    expect(vertexPrice("anthropic", "claude-sonnet-4-5@20250929", "us-east5")).toMatchObject({ input: 3.3, output: 16.5, cached: 0.33, cacheWrite: 4.125 });
    expect(vertexPrice("anthropic", "claude-sonnet-4@20250514", "us-east5")).toMatchObject({ input: 3, output: 15 });
    expect(vertexPrice("google", "gemini-2.0-flash-001", "us-central1")).toMatchObject({ input: 0.15, output: 0.6 });
    expect(vertexPrice("google", "gemini-9", "global")).toBeNull();
  });
});
