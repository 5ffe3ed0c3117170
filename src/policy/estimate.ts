/** Output tokens assumed when a request names no limit: providers reserve some against TPM too. */
export const DEFAULT_OUTPUT_TOKENS = 256;
/** Cost of a body that is not JSON: forwarded untouched, charged a flat guess. */
export const DEFAULT_COST = 1_000;

/**
 * Tokens a request will draw from the provider's TPM: about a token per 4 bytes of body (prompt
 * and framing), plus the output it may generate. Cheap on purpose: it runs on every request.
 */
export function estimateTokens(body: unknown, bytes: number): number {
  if (typeof body !== "object" || body === null) return bytes === 0 ? 1 : DEFAULT_COST;
  return Math.ceil(bytes / 4) + Math.min(outputLimit(body) ?? DEFAULT_OUTPUT_TOKENS, 1_000_000);
}

/** The output limit a body names (`max_tokens`, `max_completion_tokens`, `max_output_tokens`, Gemini's `maxOutputTokens`), or null. */
export function outputLimit(body: unknown): number | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as Record<string, unknown>;
  const gen = b.generationConfig as Record<string, unknown> | undefined;
  const out = [b.max_tokens, b.max_completion_tokens, b.max_output_tokens, gen?.maxOutputTokens].find(
    (v): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0,
  );
  return out ?? null;
}
