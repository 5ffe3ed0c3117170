import { Hono } from "hono";
export { Limiter } from "./limiter/object";

const app = new Hono();
app.get("/healthz", (c) => c.json({ ok: true }));
export default app;
