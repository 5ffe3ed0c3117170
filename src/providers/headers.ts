/**
 * @module The flavour rows' header and credential spellings (and their streams' last events), gathered over every row: what the
 * cache, an answer's renaming, a pool's hiding of its members and a pool's stripping of a
 * caller's credential read. A stored answer or a member's is read without knowing which family
 * sent it, and a caller may send any family's headers, so each reads the union.
 */
import type { HeaderFamilies, Spellings } from "./flavour";
import { FLAVOURS } from "./table";

const rows = Object.values(FLAVOURS);
const union = (spellings: Spellings[]): string[] => [...new Set(spellings.flat())];
const family = (k: keyof HeaderFamilies) => union(rows.map((f) => f.headers[k] ?? []));

/** Whether a lowercase header `name` is one of `spellings` (a prefix ending in `-`, or a whole name). */
export const spelled = (name: string, spellings: Spellings): boolean => spellings.some((s) => (s.endsWith("-") ? name.startsWith(s) : name === s));

/** Every family's rate-limit headers (prefixes). */
export const QUOTA_HEADERS: Spellings = family("quota");
/** Every family's headers naming the account that answered. */
export const ACCOUNT_HEADERS: Spellings = family("account");
/** Every family's headers describing the provider at the time. */
export const TIMING_HEADERS: Spellings = family("timing");
/** Every family's headers that tell a pool's members apart besides their quota. */
export const MEMBER_HEADERS: Spellings = family("member");
/** Every family's request headers that change the answer, sorted: the cache key's order. */
export const SEMANTIC_HEADERS: Spellings = family("semantic").sort();

/** Every header any family reads a credential from. */
export const CREDENTIAL_HEADERS: Spellings = union(rows.map((f) => f.credentialHeaders));
/** Every header any family reads a credential or its org/project scope from. */
export const CREDENTIAL_AND_SCOPE_HEADERS: Spellings = union(rows.flatMap((f) => [f.credentialHeaders, f.scopeHeaders ?? []]));
/** What ends a stream of any family (chat's `[DONE]`, Anthropic's `message_stop`, the Responses API's `response.completed`, Gemini's `finishReason`). */
export const STREAM_ENDS: readonly string[] = union(rows.map((f) => f.streamEnds));

/** Every query parameter any family reads a credential from. */
export const CREDENTIAL_PARAMS: Spellings = union(rows.map((f) => f.credentialParams ?? []));
