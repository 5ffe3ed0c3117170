// Anthropic's prompt caching, as its docs tell it (docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
// the prefix up to and including the last block marked `cache_control`, in the order tools, system,
// messages, is cached once a response to it has begun, for 5 minutes (1 hour with `ttl: "1h"`),
// each read refreshing it; a prefix under the model's minimum (1,024 tokens for most models) is
// not cached; usage reports the prefix as `cache_creation_input_tokens` on a miss and
// `cache_read_input_tokens` on a hit, and `input_tokens` the rest. Its rate limits
// (docs.anthropic.com/en/api/rate-limits, "cache-aware ITPM"): for most models reads do not count
// towards ITPM, writes do. Caches are per organization and model here: an account (limits.ts) and its model.
import { textTokens } from "./request.ts";

/** The shortest prefix that is cached (docs: 1,024 tokens for Claude Sonnet and Opus 4.x; more for some). */
export const MIN_CACHED_TOKENS = 1_024;
const FIVE_MINUTES = 5 * 60_000;

export interface CachePrefix {
  /** The prefix itself as JSON: two requests share a cache entry when theirs are the same. */
  id: string;
  /** Its prompt tokens, counted as the request's are (request.ts). */
  tokens: number;
  ttlMs: number;
}

const marked = (block: unknown): block is { cache_control: { ttl?: unknown } } =>
  typeof block === "object" && block !== null && typeof (block as { cache_control?: unknown }).cache_control === "object";

/** The cacheable prefix of a Messages body, or null: no breakpoint, or one under the minimum. */
export function cachePrefix(body: Record<string, unknown>): CachePrefix | null {
  // Each block in order, with what counts as its prompt text (tools count none, as request.ts has it).
  const blocks: { block: unknown; text: unknown }[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) blocks.push({ block: tool, text: null });
  const system = body.system;
  if (typeof system === "string") blocks.push({ block: system, text: system });
  else if (Array.isArray(system)) for (const b of system) blocks.push({ block: b, text: b });
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    const content = (m as { content?: unknown } | null)?.content;
    if (Array.isArray(content)) for (const b of content) blocks.push({ block: { role: (m as { role?: unknown }).role, ...(b as object) }, text: b });
    else blocks.push({ block: m, text: content });
  }
  let last = -1;
  blocks.forEach((b, i) => {
    if (marked(b.block)) last = i;
  });
  if (last < 0) return null;
  const prefix = blocks.slice(0, last + 1);
  const tokens = textTokens(prefix.map((b) => b.text));
  if (tokens < MIN_CACHED_TOKENS) return null;
  const ttl = (blocks[last]!.block as { cache_control: { ttl?: unknown } }).cache_control.ttl;
  return { id: JSON.stringify(prefix.map((b) => b.block)), tokens, ttlMs: ttl === "1h" ? 12 * FIVE_MINUTES : FIVE_MINUTES };
}

/** One account's cache entries: until when each prefix, of each model, is there. */
export class PromptCache {
  readonly #until = new Map<string, number>();

  /** Whether a request of `model` with this prefix, arriving `now`, reads it from the cache. */
  hit(model: string, p: CachePrefix, now: number): boolean {
    return (this.#until.get(`${model}\n${p.id}`) ?? 0) > now;
  }

  /** A response to it has begun: the prefix is there (again) for its lifetime from now. */
  keep(model: string, p: CachePrefix, now: number): void {
    this.#until.set(`${model}\n${p.id}`, now + p.ttlMs);
  }
}
