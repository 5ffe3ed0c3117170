// `ANY /:provider/*`: the request path, as a list of named stages over one record of the request
// (proxy/call.ts), each `(call, next)` as Hono's compose runs its handlers. A stage answers itself
// (a refusal, a cache hit) or hands on to the next, and does its work after the answer when it
// comes back (a label kept, a batch recorded, a budget settled, a slot released). Each stage is a
// module of its own in proxy/stages/.
import { Hono } from "hono/tiny";
import type { Env } from "../env";
import { Call, pipeline } from "../proxy/call";
import { batches } from "../proxy/stages/batches";
import { body } from "../proxy/stages/body";
import { budgeted } from "../proxy/stages/budgeted";
import { cached } from "../proxy/stages/cached";
import { caller } from "../proxy/stages/caller";
import { described } from "../proxy/stages/described";
import { door } from "../proxy/stages/door";
import { gated } from "../proxy/stages/gated";
import { labelled } from "../proxy/stages/labelled";
import { logged } from "../proxy/stages/logged";
import { proven } from "../proxy/stages/proven";
import { routed } from "../proxy/stages/routed";
import { sent } from "../proxy/stages/sent";
import { stored } from "../proxy/stages/stored";
import { traced } from "../proxy/stages/traced";

const serve = pipeline([
  logged, // the gateway's own errors on a request it read, logged once
  door, // the token or virtual key, the settings, what is asked: refused before a body is read
  traced, // the request's span (OTEL_*), ended with its answer
  caller, // who asks: caller, lane, tier headers, virtual key
  body, // the body, read as it arrives, held until the request has ended
  proven, // whether a caller's own credential has proven the identity its path names; each answer told
  described, // its key, cost, model, tier (its JSON parsed once)
  labelled, // x-slotgate-limit-key: a credential's labels, kept once answered
  batches, // a virtual key's own batches and files
  stored, // a virtual key's own stored responses and files
  routed, // a pool's members
  budgeted, // a budget's reservation, the meter, settled at the end
  cached, // the shared response cache
  gated, // a virtual key's cap on requests in flight, and its revocation
  sent, // the limiter and the attempts
]);

export const proxy = new Hono<{ Bindings: Env }>();

proxy.all("/:provider/*", (c) => serve(new Call(c.env, c.req.raw, (p) => c.executionCtx.waitUntil(p), Date.now())));
