// The dashboard's files, from the Worker's static assets (assets/admin/, built by `npm run
// dashboard`): the HTML shell, its script and its stylesheet. They hold no data and no token, so
// the admin guard lets them through without one; everything they fetch needs it.
import type { Env } from "../env";

/** Request path to asset path. */
export const DASHBOARD_FILES: Record<string, string> = {
  "/admin": "/admin/index.html",
  "/admin/dashboard.js": "/admin/dashboard.js",
  "/admin/dashboard.css": "/admin/dashboard.css",
};

const SECURITY = {
  // Only its own script and style, and fetches to this origin; nothing inline, nothing framed.
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  // A new deploy's dashboard is picked up at once.
  "cache-control": "no-cache",
};

/** One of the files, with the headers above. */
export async function dashboardFile(env: Env, url: URL, file: string): Promise<Response> {
  const got = await env.ASSETS.fetch(new Request(new URL(file, url.origin)));
  const res = new Response(got.body, got);
  for (const [k, v] of Object.entries(SECURITY)) res.headers.set(k, v);
  return res;
}
