import { Hono } from "hono/tiny";
import type { Env } from "./env";
import { EXAMPLE_PATH } from "./providers/table";
import { gatewayError } from "./proxy/errors";
import { admin } from "./routes/admin";
import { proxy } from "./routes/proxy";

// Deployed as `BatchBook` (wrangler.toml's class_name): renaming a Durable Object class takes a
// `renamed_classes` migration in every account that runs it, so the old name stays bound.
export { OwnedObjects as BatchBook } from "./batches/owned";
export { Budget } from "./budget/object";
export { CacheShard } from "./cache/object";
export { Directory } from "./directory/object";
export { Limiter } from "./limiter/object";
export { KeySlots } from "./keys/slots-object";
export { VirtualKeys } from "./keys/object";

const app = new Hono<{ Bindings: Env }>();

app.get("/healthz", (c) => c.json({ ok: true }));
// Before the proxy: otherwise /admin/... would be read as a provider named "admin".
app.route("/", admin);
app.route("/", proxy);
app.notFound(() => gatewayError("unknown_provider", `use /<provider>/<path>, e.g. ${EXAMPLE_PATH}`));
// Never a stack trace to the caller; the message stays in the logs, which hold no credentials.
app.onError((err) => {
  console.error("slotgate: unhandled error", err instanceof Error ? err.message : String(err));
  return new Response(JSON.stringify({ error: { type: "internal_error", message: "the gateway failed to handle this request" } }), {
    status: 500,
    headers: { "content-type": "application/json", "x-slotgate-error": "internal_error" },
  });
});

export default app;
