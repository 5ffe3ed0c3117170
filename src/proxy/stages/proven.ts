// Whether a caller's own credential has proven it may use the identity its path names (Vertex's
// project: proxy/proofs.ts). The key it is described with (described.ts) asks here; each status an
// attempt got from the provider itself is told here (the retry loop's `upstream` hook, steps.ts
// send()), so no answer the gateway made or replayed (a cache hit, a refusal of its own) proves
// anything. A pooled request's keys are its members', which need no proof.
import { Proofs } from "../proofs";
import type { Stage } from "../call";

/** This isolate's proofs. */
export const PROOFS = new Proofs();

export const proven: Stage = async (call, next) => {
  if (call.pooled) return next();
  const provider = call.asked.provider.name;
  call.proven = (hash, identity) => PROOFS.proven(provider, hash, identity, Date.now());
  const heard = call.upstream;
  call.upstream = (to, status) => {
    heard(to, status);
    const key = call.read?.key;
    if (to === provider && status !== null && key?.identity) PROOFS.answered(provider, key.credentialHash, key.identity, status, Date.now());
  };
  return next();
};
