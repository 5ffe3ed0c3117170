// A plain pass-through Worker: /openai/<rest> goes to UPSTREAM/<rest>, the response comes back as
// is. The same path shape as the gateway, so one client base URL fits both; /healthz answers here
// because the harness waits for it.
export default {
  async fetch(request: Request, env: { UPSTREAM: string }): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    const rest = url.pathname.replace(/^\/openai(?=\/)/, "");
    return fetch(new Request(`${env.UPSTREAM}${rest}${url.search}`, request));
  },
};
