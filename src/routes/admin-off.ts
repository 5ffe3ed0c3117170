/**
 * @module
 * The answer of every /admin route while no ADMIN_TOKEN is configured: the contract's 404, with a
 * body that says the admin routes are off and how their operator turns them on (a browser asking
 * for the dashboard gets it as a page). It says nothing about this gateway beyond that; the first
 * such request in an isolate also says it in the Worker's log, where the operator looks.
 */
import { gatewayError } from "../proxy/errors";

export const ADMIN_OFF =
  "admin routes are not enabled: the operator turns them on by setting the ADMIN_TOKEN secret (locally: ADMIN_TOKEN=<a long random value> in .dev.vars, then restart npm start; deployed: npm run wrangler -- secret put ADMIN_TOKEN)";

/** The dashboard's own addresses: where a browser would ask for a page. */
const PAGES = new Set(["/admin", "/admin/"]);

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Slotgate: admin routes are not enabled</title></head>
<body><h1>Admin routes are not enabled</h1>
<p>The dashboard and the admin API are off until the operator sets the <code>ADMIN_TOKEN</code> secret:</p>
<ul><li>locally: <code>ADMIN_TOKEN=&lt;a long random value&gt;</code> in <code>.dev.vars</code>, then restart <code>npm start</code>;</li>
<li>deployed: <code>npm run wrangler -- secret put ADMIN_TOKEN</code>.</li></ul></body></html>
`;

let logged = false;

export function adminOff(req: Request): Response {
  if (!logged) {
    logged = true;
    console.warn(`slotgate: ${ADMIN_OFF}`);
  }
  const path = new URL(req.url).pathname;
  if ((req.method === "GET" || req.method === "HEAD") && PAGES.has(path) && (req.headers.get("accept") ?? "").includes("text/html")) {
    return new Response(req.method === "HEAD" ? null : PAGE, {
      status: 404,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": "default-src 'none'",
        "x-content-type-options": "nosniff",
        "x-slotgate-error": "not_found",
      },
    });
  }
  return gatewayError("not_found", ADMIN_OFF, { "cache-control": "no-store" });
}
