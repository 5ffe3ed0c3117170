// Token counts from a provider's own `usage`, in one shape whatever the provider. Pure.
import { USAGE_AT } from "../providers/dialect";

/**
 * One answer's tokens. `input` is every prompt token, cached or not (OpenAI's `prompt_tokens`,
 * Gemini's `promptTokenCount`; Anthropic's three input fields added up); `cached` (read from the
 * provider's prompt cache) and `cacheWrite` (written to it) are parts of `input`.
 */
export interface Tokens {
  input: number;
  output: number;
  cached: number;
  cacheWrite: number;
}

const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
const has = (o: Record<string, unknown>, k: string) => typeof o[k] === "number";
const obj = (v: unknown): Record<string, unknown> | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/**
 * Reads one `usage` (or Gemini `usageMetadata`) object, or null when it holds no token counts.
 * Recognised: OpenAI chat (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`),
 * OpenAI Responses (`input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens`),
 * Anthropic (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`),
 * Gemini (`promptTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`, `cachedContentTokenCount`),
 * Bedrock's Converse (`inputTokens`, `outputTokens`, `cacheReadInputTokens`, `cacheWriteInputTokens`:
 * its input, as Anthropic's, leaves the cache out).
 */
export function tokensOf(usage: unknown): Tokens | null {
  const u = obj(usage);
  if (!u) return null;
  if (has(u, "prompt_tokens") || has(u, "completion_tokens")) {
    const details = obj(u.prompt_tokens_details);
    // DeepSeek names its cache hits at the top level.
    const cached = details ? n(details.cached_tokens) : n(u.prompt_cache_hit_tokens);
    return { input: n(u.prompt_tokens), output: n(u.completion_tokens), cached, cacheWrite: 0 };
  }
  if (has(u, "promptTokenCount") || has(u, "candidatesTokenCount")) {
    // Thinking tokens are billed as output.
    return { input: n(u.promptTokenCount), output: n(u.candidatesTokenCount) + n(u.thoughtsTokenCount), cached: n(u.cachedContentTokenCount), cacheWrite: 0 };
  }
  if (has(u, "inputTokens") || has(u, "outputTokens")) {
    const cached = n(u.cacheReadInputTokens);
    const cacheWrite = n(u.cacheWriteInputTokens);
    return { input: n(u.inputTokens) + cached + cacheWrite, output: n(u.outputTokens), cached, cacheWrite };
  }
  if (has(u, "input_tokens") || has(u, "output_tokens")) {
    const details = obj(u.input_tokens_details);
    if (details) return { input: n(u.input_tokens), output: n(u.output_tokens), cached: n(details.cached_tokens), cacheWrite: 0 };
    // Anthropic: input_tokens excludes the cache's reads and writes.
    const cached = n(u.cache_read_input_tokens);
    const cacheWrite = n(u.cache_creation_input_tokens);
    return { input: n(u.input_tokens) + cached + cacheWrite, output: n(u.output_tokens), cached, cacheWrite };
  }
  return null;
}

const at = (json: unknown, path: readonly string[]): unknown => path.reduce<unknown>((o, k) => obj(o)?.[k], json);

/** The usage a parsed JSON answer (or one stream event) carries, at the first of `paths` (default: the families' usual places) that holds one. */
export function usageIn(json: unknown, paths: readonly (readonly string[])[] = USAGE_AT): Tokens | null {
  if (!obj(json)) return null;
  for (const p of paths) {
    const t = tokensOf(at(json, p));
    if (t) return t;
  }
  return null;
}

/**
 * Folds a stream's successive readings into one. Anthropic sends its input in `message_start` and
 * the final (cumulative) output in `message_delta`, which may omit the input fields; Gemini and
 * OpenAI send cumulative totals. So each field keeps the largest value seen.
 */
export function merge(a: Tokens | null, b: Tokens | null): Tokens | null {
  if (!a) return b;
  if (!b) return a;
  return { input: Math.max(a.input, b.input), output: Math.max(a.output, b.output), cached: Math.max(a.cached, b.cached), cacheWrite: Math.max(a.cacheWrite, b.cacheWrite) };
}
