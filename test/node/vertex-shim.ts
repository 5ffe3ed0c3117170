// What the gateway's request path must do for Vertex, in miniature, so each client's snippet can run
// end to end against the stand-in as it would against `https://<gateway>/vertex`. NOT the gateway:
// issue 40 rebuilds that path and the lead wires Vertex into it; this only composes the building
// blocks (the draft row's readers, the token minter) the way the wiring will, to show they fit.
//
// - A virtual key (`sgk-...`, as the Bearer token or express mode's `x-goog-api-key`) is swapped for
//   its pool member's minted token; the path's project and location become the member's (express
//   mode's path, which has none, gets them); the host is the location's (vertexHost), sent to the
//   stand-in as a path prefix it checks against the location; a 401 drops the token and goes once more.
// - Anything else is a caller's own token: the request goes on untouched.
// - Each request's limit key is read off the upstream path: location, base model, project.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { ServiceAccountKey } from "../../src/providers/auth/service-account";
import { GoogleTokens } from "../../src/providers/auth/access-tokens";
import { baseModel, vertexHost, vertexRoute } from "../../src/providers/drafts/vertex";

export interface Member {
  key: ServiceAccountKey;
  project: string;
  location: string;
}

export interface Passed {
  via: "virtual" | "own";
  /** The credential header the caller used. */
  header: "authorization" | "x-goog-api-key";
  /** The path as the client sent it (after /vertex), and as it went upstream (after the host). */
  path: string;
  upstream: string;
  limitKey: string;
  status: number;
}

export interface Shim {
  url: string;
  passed: Passed[];
  close(): Promise<void>;
}

export async function startShim(standinUrl: string, members: Record<string, Member>): Promise<Shim> {
  const tokens = new GoogleTokens({ fetch: (u, i) => fetch(u, i), now: Date.now });
  const passed: Passed[] = [];
  const server = createServer(async (req, res) => {
    const [rawPath = "", query = ""] = (req.url ?? "").replace(/^\/vertex/, "").split(/\?(.*)/s);
    const route = vertexRoute(rawPath);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (!route) return void res.writeHead(404).end();
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const apiKey = req.headers["x-goog-api-key"] as string | undefined;
    const credential = bearer ?? apiKey ?? "";
    const member = credential.startsWith("sgk-") ? members[credential] : undefined;
    if (credential.startsWith("sgk-") && !member) return void res.writeHead(401).end();
    const project = member?.project ?? route.project ?? "";
    const location = member?.location ?? route.location ?? "";
    const upstream = `/${route.version}/projects/${project}/locations/${location}/publishers/${route.publisher}/models/${route.model}:${route.verb}`;
    const url = `${standinUrl}/${new URL(vertexHost(location)).host}${upstream}${query ? `?${query}` : ""}`;
    const send = async (authorization: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization }, body: Buffer.concat(chunks) });
    let answer: Response;
    if (member) {
      let token = await tokens.token(member.key);
      answer = await send(`Bearer ${token}`);
      if (answer.status === 401) {
        tokens.refuse(member.key, token);
        token = await tokens.token(member.key);
        answer = await send(`Bearer ${token}`);
      }
    } else answer = await send(req.headers.authorization ?? "");
    passed.push({
      via: member ? "virtual" : "own", header: bearer ? "authorization" : "x-goog-api-key", path: rawPath, upstream, status: answer.status,
      limitKey: `vertex:${location}/${baseModel(route.publisher, route.model, location)}:${project}`,
    });
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
    if (answer.body) Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream).pipe(res);
    else res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    passed,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
