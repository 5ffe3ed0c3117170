// startStandin: the HTTP server, its control routes (/_stats, /_reset, /_config) and the handle.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Dice } from "./faults.ts";
import { handleBatchApi, readBytes } from "./batch-api.ts";
import { handleBedrock } from "./bedrock.ts";
import { advance } from "./batch-run.ts";
import { GoogleIssuer } from "./google-oauth.ts";
import type { ServiceAccountFile, ServiceAccountSpec } from "./google-oauth.ts";
import { handleApi, route, sendJson } from "./handle.ts";
import type { State } from "./handle.ts";
import { openai } from "./openai.ts";
import { mergeOptions } from "./options.ts";
import type { StandinOptions } from "./options.ts";
import { StatsRecorder } from "./stats.ts";
import type { Stats } from "./stats.ts";

export interface Standin {
  /** e.g. http://127.0.0.1:41234 (no trailing slash, no /v1). */
  url: string;
  port: number;
  stats(): Stats;
  /** Clears the counters (buckets keep their levels). */
  resetStats(): void;
  /** Clears the counters and refills every bucket, as POST /_reset does. */
  reset(): void;
  /** Changes options live; buckets keep their levels, clamped to new capacities. */
  configure(partial: Partial<StandinOptions>): void;
  options(): StandinOptions;
  /**
   * A new Google service account key (made with its key pair here), whose token_uri is this
   * stand-in's token endpoint (`<url>/token`): Vertex's credential (google-oauth.ts, vertex.ts).
   */
  serviceAccount(spec: ServiceAccountSpec): ServiceAccountFile;
  /** Deletes one of an account's keys: assertions it signs are refused from now on. */
  deleteKey(clientEmail: string, privateKeyId: string): void;
  /** Every access token issued so far expires now. */
  expireTokens(): void;
  close(): Promise<void>;
}

const MAX_BODY = 32 * 1024 * 1024;

const readBody = async (req: IncomingMessage): Promise<string> => (await readBytes(req, MAX_BODY)).toString("utf8");

export async function startStandin(options: Partial<StandinOptions> = {}): Promise<Standin> {
  const initial = mergeOptions(options);
  const stats = new StatsRecorder();
  let url = "";
  const state: State = {
    options: initial, accounts: new Map(), stats, dice: new Dice(initial.seed), held: new Set(), files: new Map(), book: { batches: new Map(), stats },
    google: new GoogleIssuer(stats, () => `${url}/token`),
  };
  // Batch lines are made when looked at; stats look at every batch first, so they count what the clock says has ended.
  const snapshot = () => {
    const now = Date.now();
    for (const b of state.book.batches.values()) advance(state.book, b, state.options, now);
    return state.stats.snapshot();
  };

  const configure = (partial: Partial<StandinOptions>) => {
    const next = mergeOptions(state.options, partial);
    if (next.seed !== state.options.seed) state.dice = new Dice(next.seed);
    state.options = next;
    if (!next.hold) for (const wake of [...state.held]) wake();
  };
  const reset = () => {
    state.stats.reset();
    for (const a of state.accounts.values()) a.refill();
    state.dice = new Dice(state.options.seed);
  };

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const key = `${req.method} ${path}`;
    if (key === "GET /_stats") sendJson(res, 200, snapshot());
    else if (key === "POST /_reset") {
      reset();
      sendJson(res, 200, { ok: true });
    } else if (key === "POST /token") {
      // Google's token endpoint (google-oauth.ts): a form post.
      const answer = state.google.exchange(new URLSearchParams(await readBody(req)), state.options.tokenLifetimeSec);
      sendJson(res, answer.status, answer.body, { "cache-control": "no-cache, no-store, max-age=0, must-revalidate", pragma: "no-cache" });
    } else if (key === "POST /_vertex/service-accounts") {
      try {
        sendJson(res, 200, state.google.serviceAccount(JSON.parse((await readBody(req)) || "{}") as ServiceAccountSpec));
      } catch (e) {
        sendJson(res, 400, { error: { message: (e as Error).message } });
      }
    } else if (key === "POST /_vertex/expire") {
      state.google.expireAll();
      sendJson(res, 200, { ok: true });
    } else if (key === "GET /_config") sendJson(res, 200, state.options);
    else if (key === "POST /_config") {
      try {
        configure(JSON.parse((await readBody(req)) || "{}"));
        sendJson(res, 200, state.options);
      } catch (e) {
        sendJson(res, 400, { error: { message: (e as Error).message } });
      }
    } else return false;
    return true;
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path = "/", query = ""] = (req.url ?? "/").split(/\?(.*)/s);
    if (await control(req, res, path)) return;
    if (await handleBedrock(state, req, res, path, query)) return;
    if (await handleBatchApi(state, req, res, path, query)) return;
    const target = req.method === "POST" ? route(path, new URLSearchParams(query)) : null;
    const raw = await readBody(req);
    if (!target) {
      const err = (route(path)?.dialect ?? openai).notFound(req.method ?? "GET", path);
      sendJson(res, err.status, err.body);
      return;
    }
    await handleApi(state, res, req.headers, path, raw, target, query);
  }

  const server = createServer((req, res) => {
    onRequest(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(e), type: "standin_error" } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(state.options.port, state.options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = state.options.host.includes(":") ? `[${state.options.host}]` : state.options.host;
  url = `http://${host}:${port}`;

  return {
    url,
    port,
    stats: snapshot,
    resetStats: () => state.stats.reset(),
    reset,
    configure,
    options: () => structuredClone(state.options),
    serviceAccount: (spec) => state.google.serviceAccount(spec),
    deleteKey: (email, kid) => state.google.deleteKey(email, kid),
    expireTokens: () => state.google.expireAll(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}
