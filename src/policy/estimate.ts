// What a request body asks of a provider, read cheaply on every request: the tokens it will draw
// from the key's windows (the limiter's estimate), the output it allows, how many answers it asks for.
import { IMAGE_TOKENS, mediaIn } from "./media";

/** Output tokens assumed when a request names no limit: providers reserve some against TPM too. */
export const DEFAULT_OUTPUT_TOKENS = 256;
/** Cost of a body that is not JSON: forwarded untouched, charged a flat guess. */
export const DEFAULT_COST = 1_000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const count = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/**
 * Tokens a request will draw from the provider's TPM: about a token per 4 bytes of body (prompt
 * and framing), an image, inline or by reference, at what a provider counts for one (media.ts),
 * plus the output it may generate, for every answer it asks for (`n`: OpenAI's cookbook
 * `api_request_parallel_processor.py` counts prompt + n x max_tokens against TPM, and a third party
 * saw max_tokens 5,000 with n 100 refused as 500,000 tokens: community.openai.com/t/360359).
 * Cheap on purpose: it runs on every request.
 */
export function estimateTokens(body: unknown, bytes: number, imageTokens = IMAGE_TOKENS): number {
  return estimate(body, bytes, imageTokens).cost;
}

/**
 * That estimate (`cost`) and, of it, the output the request may generate, every answer together (`out`): what a window of
 * generated tokens alone (Fireworks', Anthropic's OTPM) is charged. The body's output limit is read
 * once. A body that is not JSON, whose allowance nobody can read, is taken to ask the default.
 * `unsure`: it holds media a provider counts by what they hold (a document, audio), priced by their
 * bytes, which may be far more than the provider counts: never reason enough to refuse it as too large.
 * `imageTokens`: what the key's provider row counts an image at most (its `limits.imageTokens`).
 * `generates`: false for an embedding, which generates nothing: its input alone is counted, as OpenAI's
 * cookbook (examples/api_request_parallel_processor.py) counts one against TPM, not 256 more assumed.
 * `unstated`: the output a body that names no limit is taken to ask (DEFAULT_OUTPUT_TOKENS, or the
 * model's whole output where its provider reserves that: estimateFor).
 */
export function estimate(body: unknown, bytes: number, imageTokens = IMAGE_TOKENS, generates = true, unstated = DEFAULT_OUTPUT_TOKENS): { cost: number; out: number; unsure?: true } {
  if (typeof body !== "object" || body === null) return bytes === 0 ? { cost: 1, out: 0 } : { cost: DEFAULT_COST, out: generates ? DEFAULT_OUTPUT_TOKENS : 0 };
  const out = generates ? Math.min((outputLimit(body) ?? unstated) * choicesOf(body), 1_000_000) : 0;
  const media = mediaIn(body, imageTokens);
  const cost = Math.ceil((bytes - media.chars) / 4) + media.tokens + out;
  return media.unsure ? { cost, out, unsure: true } : { cost, out };
}

/** An embedding's route (OpenAI-style `/embeddings`, Gemini's `:embedContent` and `:batchEmbedContents`): it generates nothing. */
export const EMBEDDINGS = /\/embeddings$|:(batchE|e)mbedContents?$/;

/**
 * The estimate of a body sent on `route` to a key of row `d`: its count of an image, none of output on
 * an embedding, and where the row reserves a model's whole output for a body that names no limit
 * (`limits.unstatedOutput`), `maxOutput` (the model's, from PRICES) when it is known.
 */
export function estimateFor(d: { limits: { imageTokens?: number; unstatedOutput?: "model" } }, route: string, body: unknown, bytes: number, maxOutput?: number): ReturnType<typeof estimate> {
  const unstated = d.limits.unstatedOutput && maxOutput ? maxOutput : DEFAULT_OUTPUT_TOKENS;
  return estimate(body, bytes, d.limits.imageTokens, !EMBEDDINGS.test(route), unstated);
}

type Rated = { limits: { outputRate?: { rate: number; models: RegExp } } };

/** What one output token draws from a key's tokens windows: its row's `limits.outputRate` where it names the key's model, else 1. */
export const outputRateOf = (d: Rated, model: string): number => (d.limits.outputRate?.models.test(model) ? d.limits.outputRate.rate : 1);

/**
 * What a key's windows are charged for a request of `cost` tokens in all, `out` of them its output
 * allowance: the whole; where the key's provider row counts generated tokens apart
 * (`limits.output`), the prompt's (`cost`) and the output's (`out`) each; where its windows count
 * the prompt alone (`limits.promptOnly`), the prompt's, and the output's to a window of generated
 * tokens its operator may state (`PROVIDERS`' quota). Where its windows draw an output token at
 * more than one (`limits.outputRate`, on the key's `model`), the output at that rate. Per key, not
 * per request: a pool's members may be of rows that count either way.
 */
export function costFor(d: Rated & { limits: { output?: unknown; promptOnly?: true } }, cost: number, out: number | undefined, model = ""): { cost: number; out?: number } {
  if (d.limits.promptOnly) return { cost: Math.max(1, cost - (out ?? 0)), ...(out !== undefined && { out }) };
  const rate = outputRateOf(d, model);
  if (out && rate !== 1) {
    cost += out * (rate - 1);
    out *= rate;
  }
  if (!d.limits.output || out === undefined) return { cost };
  return { cost: Math.max(1, cost - out), out };
}


/** Gemini's generation config, as the REST API takes it: `generationConfig` or `generation_config`. */
const generation = (b: Obj): Obj | undefined => {
  const g = b.generationConfig ?? b.generation_config;
  return isObj(g) ? g : undefined;
};

/**
 * The output limit a body names, per answer: `max_tokens`, `max_completion_tokens`,
 * `max_output_tokens`, Gemini's `maxOutputTokens` (or `max_output_tokens`) in its generation
 * config, Bedrock's own: Converse's `inferenceConfig.maxTokens` (API_runtime_InferenceConfiguration),
 * Nova's `inferenceConfig.max_new_tokens`, Llama's `max_gen_len`, Titan's
 * `textGenerationConfig.maxTokenCount` (userguide/model-parameters-*); null when it names none.
 */
export function outputLimit(body: unknown): number | null {
  if (!isObj(body)) return null;
  const gen = generation(body);
  const inf = isObj(body.inferenceConfig) ? body.inferenceConfig : undefined;
  const titan = isObj(body.textGenerationConfig) ? body.textGenerationConfig : undefined;
  const out = [body.max_tokens, body.max_completion_tokens, body.max_output_tokens, gen?.maxOutputTokens, gen?.max_output_tokens, inf?.maxTokens, inf?.max_new_tokens, body.max_gen_len, titan?.maxTokenCount].find(count);
  return out ?? null;
}

/**
 * How many answers one request is billed for: OpenAI's `n` (and a completion's `best_of`, each
 * generated and billed), Gemini's `candidateCount`. At least 1.
 */
export function choicesOf(body: unknown): number {
  if (!isObj(body)) return 1;
  const gen = generation(body);
  const asked = [body.n, body.best_of, gen?.candidateCount, gen?.candidate_count].filter(count).map(Math.ceil);
  return Math.max(1, ...asked);
}
