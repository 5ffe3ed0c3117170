// A plain pass-through Worker: /openai/<rest> goes to UPSTREAM/<rest>, the response comes back as
// is. The same path shape as the gateway, so one client base URL fits both; /healthz answers here
// because the harness waits for it. /do/openai/<rest> first makes one empty call into a Durable
// Object: the floor of any design that asks an object once per request. /memory/openai/<rest> answers
// a fixed chat completion from memory: the floor of any cache hit.
import { DurableObject } from "cloudflare:workers";

export class Ping extends DurableObject {
  private n = 0;
  async ping(): Promise<number> {
    return ++this.n;
  }
}

const COMPLETION = JSON.stringify({
  id: "chatcmpl-memory", object: "chat.completion", created: 0, model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "From memory." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
});

type Env = { UPSTREAM: string; PING: DurableObjectNamespace<Ping> };

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    let path = url.pathname;
    if (path.startsWith("/memory/")) {
      await request.arrayBuffer();
      return new Response(COMPLETION, { headers: { "content-type": "application/json" } });
    }
    if (path.startsWith("/do/")) {
      await env.PING.get(env.PING.idFromName("ping")).ping();
      path = path.slice(3);
    }
    const rest = path.replace(/^\/openai(?=\/)/, "");
    return fetch(new Request(`${env.UPSTREAM}${rest}${url.search}`, request));
  },
};
