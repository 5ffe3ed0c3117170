// The batch stage of the request path, for virtual keys: a key with the `batches` or `files` scope
// (and not `all`) reaches only the batches and files it made, lists only those; with `batches`
// alone it may upload only batch input and delete nothing. A request naming one of them goes to
// the pool member that holds it. What it
// makes is recorded in its OwnedObjects, its batches' results are metered as they are read, and a
// budgeted key reserves a batch's estimate when it is created.
import { reserveBudget, unpriced } from "../budget/stage";
import { worstCase } from "../budget/worst";
import type { Env } from "../env";
import type { VirtualKey } from "../keys/object";
import type { Pool } from "../pools/config";
import { memberHash } from "../pools/member";
import { gatewayError } from "../proxy/errors";
import { scopeOf } from "../providers/endpoints";
import type { FlavourName } from "../providers/table";
import { batchPrice, type PriceTable, priceOf } from "../usage/prices";
import { BATCH_HOLD_MS, type Owned, ownedOf, ownerOf } from "./owned";
import { batchRoutes, factsOf, type Op, opOf, readPath, TRACKED } from "./ops";
import { pricedLines } from "./price";
import { tapResults } from "./tap";

export interface BatchAsk {
  env: Env;
  vk: VirtualKey;
  pool: Pool;
  provider: string;
  flavour: FlavourName;
  method: string;
  rest: string;
  search: URLSearchParams;
  /** The body's bytes (an upload's form), and its JSON: the request's one parse (null when it is not JSON). */
  body: Uint8Array;
  json: () => unknown;
  headers: Headers;
  prices: PriceTable;
  /** `<gateway origin>/<provider>`: where Anthropic's results_url should send the caller back to. */
  here: string;
  waitUntil: (p: Promise<unknown>) => void;
}

export interface BatchPlan {
  /** The pool, or only the member that holds what the request names. */
  pool: Pool;
  /** The answer, once run (`served`: the member that answered it): recorded, metered, or rewritten. */
  finish(res: Response, served?: string): Promise<Response>;
}

/** Whether `scopes` let a key reach the files endpoints a batch job needs (src/batches/ then keeps it to its own). */
export const batchesGrant = (scopes: readonly string[], flavour: FlavourName, method: string, rest: string): boolean =>
  scopes.includes("batches") && ["upload", "files", "file", "content"].includes(opOf(flavour, method, rest)?.k ?? "");

const isFileOp = (op: Op) => ["upload", "files", "file", "content", "unfile"].includes(op.k);

/** null: not a batch or file request of a tracked API. A Response: refused, or a list answered here. */
export async function batchStage(b: BatchAsk): Promise<BatchPlan | Response | null> {
  const op = opOf(b.flavour, b.method, b.rest);
  const { vk } = b;
  // Batches and files whose owner the gateway cannot tell (Gemini's, Azure's, Anthropic's files, OpenAI's uploads): only a key that may see the whole account.
  const untracked = !op && !vk.scopes.includes("all") ? scopeOf(b.flavour, b.method, b.rest) : null;
  if (untracked === "batches" || untracked === "files")
    return gatewayError("forbidden", `virtual key ${vk.name}: the gateway keeps each key to its own ${untracked} on ${TRACKED[untracked]} only; here that needs the scope all`);
  if (!op) return null;
  // A key whose scopes reach the whole account (all) keeps that meaning; otherwise only its own.
  const own = !vk.scopes.includes("all");
  const filesToo = vk.scopes.includes("files");
  const book = ownedOf(b.env, vk);
  const forbid = (why: string) => gatewayError("forbidden", `virtual key ${vk.name} ${why} (with the batches or files scope a key reaches only the batches and files it made)`);
  if (own && (op.k === "unbatch" || (op.k === "unfile" && !filesToo))) return forbid("may not delete");
  if (own && (op.k === "files" || op.k === "list")) return listed(b, op, book);
  const known = "id" in op ? await book.find(op.id) : null;
  if (own && "id" in op && (!known || (known.kind === "file") !== isFileOp(op))) return forbid(`did not make ${op.id.slice(0, 100)}`);

  let member = known?.member;
  let estimate = 0;
  let upload: { usd: number } | null = null;
  if (op.k === "upload") {
    const read = await readUpload(b, own && !filesToo);
    if (read instanceof Response) return read;
    upload = read;
  } else if (op.k === "create") {
    const asked = b.json() as { input_file_id?: unknown; requests?: { params?: unknown }[] } | null;
    if (batchRoutes(b.flavour)?.input === "file") {
      const file = typeof asked?.input_file_id === "string" ? await book.find(asked.input_file_id) : null;
      if (own && file?.kind !== "file") return forbid(`did not upload the input file ${String(asked?.input_file_id).slice(0, 100)}`);
      member = file?.member;
      estimate = file?.usd ?? -1;
    } else {
      const est = estimateOf(b, Array.isArray(asked?.requests) ? asked.requests.map((r) => r?.params) : []);
      if (est instanceof Response) return est;
      estimate = est;
    }
  }
  // A budgeted key reserves what the whole batch may cost before it is made.
  let held: Awaited<ReturnType<typeof reserveBudget>> | null = null;
  if (op.k === "create" && typeof vk.budget === "number") {
    if (estimate < 0) return forbid("has a budget: the batch's input file must be uploaded through the gateway, so its cost is known");
    held = await reserveBudget(b.env, { ...vk, budget: vk.budget }, estimate, "this batch", BATCH_HOLD_MS);
    if (held instanceof Response) return held;
  }
  const pool = member ? { ...b.pool, members: b.pool.members.filter((m) => m.name === member) } : b.pool;
  if (pool.members.length === 0) return gatewayError("not_found", `pool ${b.pool.name} no longer has member ${member}, which holds ${"id" in op ? op.id : "this"}`);

  return {
    pool,
    async finish(res, served) {
      const reservation = held && !(held instanceof Response) ? held : null;
      if (res.status >= 300) {
        if (reservation) b.waitUntil(reservation.settle(0).catch(() => {}));
        return res;
      }
      const by = member ?? served ?? pool.members[0]!.name;
      const hash = await memberHash(pool.members.find((m) => m.name === by) ?? pool.members[0]!);
      if (op.k === "content" || op.k === "results") {
        const batch = op.k === "results" ? op.id : known?.batch;
        // An error file's lines carry no usage, and are none of the results' lines.
        if (!batch || !res.body || known?.role === "error") return res;
        // Each line once, whichever file or range it comes in: the book settles the batch once all its lines are counted.
        const whose = { provider: b.provider, vk: vk.name, pool: b.pool.name, memberHash: hash };
        let chain: Promise<unknown> = Promise.resolve();
        const then = (f: () => Promise<unknown>) => b.waitUntil((chain = chain.then(f, f)));
        return new Response(tapResults(res.body, (lines) => then(() => book.meter(batch, pricedLines(lines, b.prices, whose)))), res);
      }
      if (!["upload", "create", "batch", "cancel"].includes(op.k)) return res;
      const text = await res.text();
      const obj = parse(text) as Record<string, unknown> | null;
      const out = rewritten(b, text, obj, res);
      if (typeof obj?.id !== "string") return out;
      const key = ownerOf(vk, b.pool.name, b.provider);
      if (upload) {
        await book.note([{ id: obj.id, kind: "file", member: by, usd: upload.usd, obj: text }], key);
        return out;
      }
      const facts = factsOf(obj);
      if (!facts) return out;
      // Only the key's own batches are noted (a key that sees the account may look at others').
      if (op.k !== "create" && !known) return out;
      const rows: Owned[] = [{ id: facts.id, kind: "batch", member: by, res: reservation?.id ?? null, obj: JSON.stringify(obj) }];
      for (const [f, role] of [[facts.output, "output"], [facts.error, "error"]] as const)
        if (f) rows.push({ id: f, kind: "file", member: by, batch: facts.id, role, obj: JSON.stringify({ id: f, object: "file", purpose: `batch_${role}` }) });
      await book.note(rows, key);
      // Over: how many lines its results hold, so it is settled once they are all counted (at once when there are none).
      if (facts.ended) b.waitUntil(book.ended(facts).catch(() => {}));
      return out;
    },
  };
}

const parse = (v: Uint8Array | string): unknown => {
  try {
    return JSON.parse(typeof v === "string" ? v : new TextDecoder().decode(v));
  } catch {
    return null;
  }
};

/**
 * The answer as the provider sent it, but for a results_url naming the provider's host (where the
 * row says a batch has one: Anthropic's): the caller is sent back through the gateway instead.
 */
function rewritten(b: BatchAsk, text: string, obj: Record<string, unknown> | null, res: Response): Response {
  const routes = batchRoutes(b.flavour);
  const results = routes?.resultsUrl && readPath(routes.read.results, { id: String(obj?.id) });
  if (typeof obj?.results_url !== "string" || !results) return new Response(text, res);
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  const body = JSON.stringify({ ...obj, results_url: `${b.here}${results}` });
  return new Response(body, { status: res.status, statusText: res.statusText, headers });
}

/** A key that sees only its own: its batches or files as it last saw them, in the provider's list shape; nothing is sent. */
async function listed(b: BatchAsk, op: Op, book: ReturnType<typeof ownedOf>): Promise<Response> {
  const limit = Math.min(op.k === "files" ? 10_000 : 100, Number(b.search.get("limit")) || 20);
  const after = b.search.get("after") ?? b.search.get("after_id");
  const { ids, objs, more } = await book.list(op.k === "files" ? "file" : "batch", limit, after);
  const tail = `"first_id":${JSON.stringify(ids[0] ?? null)},"last_id":${JSON.stringify(ids.at(-1) ?? null)},"has_more":${more}`;
  // The objects are the provider's JSON as stored: put together, not parsed again.
  return new Response(`{${batchRoutes(b.flavour)?.listHead ?? ""}"data":[${objs.join(",")}],${tail}}`, { headers: { "content-type": "application/json" } });
}

/** An upload's form: `batchOnly` (the batches scope alone) uploads batch input only; a budgeted key's lines are priced now. */
async function readUpload(b: BatchAsk, batchOnly: boolean): Promise<{ usd: number } | Response> {
  let form: FormData;
  try {
    form = await new Request("https://upload.invalid/", { method: "POST", headers: b.headers, body: b.body }).formData();
  } catch {
    return gatewayError("invalid_request", "the upload is not a multipart form");
  }
  if (batchOnly && form.get("purpose") !== "batch") return gatewayError("forbidden", `virtual key ${b.vk.name} may upload only batch input (purpose batch)`);
  const file = form.get("file");
  // Only batch input is priced: it is what a batch made of it costs (the provider takes no other purpose as input).
  if (typeof b.vk.budget !== "number" || form.get("purpose") !== "batch" || typeof file === "string" || !file) return { usd: 0 };
  const lines = (await file.text()).split("\n").filter((l) => l.trim() !== "");
  const usd = estimateOf(b, lines.map((l) => (parse(l) as { body?: unknown } | null)?.body));
  return usd instanceof Response ? usd : { usd };
}

/**
 * The most its requests may cost at batch prices (each request's worst case: budget/worst.ts);
 * 403 for a model with no price, or a request with no bound.
 */
function estimateOf(b: BatchAsk, bodies: unknown[]): number | Response {
  if (typeof b.vk.budget !== "number") return 0;
  let usd = 0;
  for (const body of bodies) {
    const model = String((body as { model?: unknown } | null)?.model ?? "");
    const price = priceOf(b.prices, b.provider, model);
    if (!price) return unpriced(b.vk.name, model);
    const worst = worstCase(body, new TextEncoder().encode(JSON.stringify(body)).byteLength, batchPrice(price), model);
    if ("why" in worst) return gatewayError("forbidden", `virtual key ${b.vk.name} has a budget, and a request of this batch cannot be bounded: ${worst.why}`);
    usd += worst.bound.usd;
  }
  return usd;
}
