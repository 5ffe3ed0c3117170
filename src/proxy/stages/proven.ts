// Whether a caller's own credential has proven it may use the identity its path names (Vertex's
// project: proxy/proofs.ts): the key it is described with (described.ts) asks here, and each answer
// the provider itself gave it (not one replayed from the cache) is told here. A pooled request's
// keys are its members', which need no proof.
import { Proofs } from "../proofs";
import type { Stage } from "../call";

/** This isolate's proofs. */
const PROOFS = new Proofs();

/** Answers the provider did not give this request itself: stored ones, and another request's. */
const REPLAYED = new Set(["hit", "collapsed"]);

export const proven: Stage = async (call, next) => {
  if (call.pooled) return next();
  call.proven = (hash, identity) => PROOFS.proven(hash, identity, Date.now());
  const res = await next();
  const { identity, credentialHash } = call.read?.key ?? {};
  if (identity && credentialHash && !REPLAYED.has(res.headers.get("x-slotgate-cache") ?? "")) PROOFS.answered(credentialHash, identity, res.status, Date.now());
  return res;
};
