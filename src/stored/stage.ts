// The stored-object stage of the request path, for virtual keys: a request that names the
// account's stored objects by id (a response to continue, a file to read, a vector store to
// search) reaches only those the key made, and goes to the member that holds them. `all` reaches
// the account's; `stored` (the account's stored responses) its responses. A response the key makes
// and lets the provider store is recorded in its OwnedObjects as its answer comes back.
import { ownedOf, ownerOf } from "../batches/owned";
import type { BatchAsk } from "../batches/stage";
import type { VirtualKey } from "../keys/object";
import type { Pool } from "../pools/config";
import { isInference } from "../providers/endpoints";
import { gatewayError } from "../proxy/errors";
import { type Ref, refsIn } from "./refs";

/** What the stage reads of a request: the batch stage's, without its files' and answers' parts, and its body's JSON (the request's one parse: null when it is not JSON). */
export type StoredAsk = Pick<BatchAsk, "env" | "vk" | "pool" | "provider" | "flavour" | "method" | "rest" | "json" | "waitUntil">;

export interface StoredPlan {
  /** The pool, or only the member that holds what the request names. */
  pool: Pool;
  /** The answer, once run (`served`: the member that answered): a response it made is recorded as it passes. */
  finish(res: Response, served?: string): Response;
}

/** Creating a response (OpenAI-style `/v1/responses`, Azure's `/openai/v1/responses`): stored by the provider unless `store: false`. */
const MAKES_RESPONSE = /\/responses$/;
/** A stored response's id in the first bytes of its answer (a JSON object, or the first event of its stream). */
const RESPONSE_ID = /"id"\s*:\s*"(resp_[A-Za-z0-9_-]{1,200})"/;
const ID_WITHIN = 16 * 1024;

/** Whether a key may name `r` that it did not make through the gateway. */
const reachesAnyway = (vk: VirtualKey, r: Ref) => vk.scopes.includes("all") || ((r.kind === "response" || r.kind === "item") && vk.scopes.includes("stored"));

/** null: nothing stored is named or made. A Response: refused (403, nothing sent). Else the plan. */
export async function storedStage(s: StoredAsk): Promise<StoredPlan | Response | null> {
  if (s.method.toUpperCase() !== "POST" || !isInference(s.flavour, s.method, s.rest)) return null;
  const json = s.json();
  const refs = refsIn(json);
  const makes = MAKES_RESPONSE.test(s.rest) && (json as { store?: unknown } | null)?.store !== false;
  if (!refs.length && !makes) return null;
  const { vk } = s;
  const book = ownedOf(s.env, vk);
  const mine = refs.length && !vk.scopes.includes("all") ? await book.owns(refs.map((r) => r.id)) : [];
  let member: string | undefined;
  for (const r of refs) {
    const made = mine.find((o) => o.id === r.id && o.kind === r.kind);
    if (!made && !reachesAnyway(vk, r))
      return gatewayError("forbidden", `virtual key ${vk.name} did not make the ${r.kind.replace("_", " ")} ${r.id.slice(0, 100)} it names: a key reaches only the stored objects it made (the scope all reaches the account's)`);
    if (made && member && made.member !== member) return gatewayError("invalid_request", `the stored objects this request names are on different members of pool ${s.pool.name}`);
    member = made?.member ?? member;
  }
  const pool = member ? { ...s.pool, members: s.pool.members.filter((m) => m.name === member) } : s.pool;
  if (pool.members.length === 0) return gatewayError("not_found", `pool ${s.pool.name} no longer has member ${member}, which holds what this request names`);
  const note = (id: string, by: string) => s.waitUntil(book.note([{ id, kind: "response", member: by }], ownerOf(vk, s.pool.name, s.provider)).catch(() => {}));
  return {
    pool,
    // A replayed answer (a cache hit) made nothing: its response may be another key's, where the pool shares its cache.
    finish: (res, served) => (makes && res.ok && res.body && served ? noting(res, (id) => note(id, member ?? served)) : res),
  };
}

/** The answer as it comes, its response id handed to `note` as soon as it passes. */
function noting(res: Response, note: (id: string) => void): Response {
  const decoder = new TextDecoder();
  let head = "";
  let looking = true;
  const look = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      out.enqueue(chunk);
      if (!looking) return;
      head += decoder.decode(chunk, { stream: true });
      const id = RESPONSE_ID.exec(head)?.[1];
      if (id) note(id);
      if (id || head.length > ID_WITHIN) looking = false;
    },
  });
  return new Response(res.body!.pipeThrough(look), res);
}
