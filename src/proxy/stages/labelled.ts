// A label (`x-slotgate-limit-key`) is a limiter of its own: a credential may use so many (a virtual
// key none: pools/stage.ts). It is kept only once its credential has been answered (proxy/labels.ts).
import type { Stage } from "../call";
import { keepLabel, labelStage } from "../labels";

export const labelled: Stage = async (call, next) => {
  const { label, provider } = call.asked;
  if (label === null) return next();
  const hash = call.read.key.credentialHash;
  const refused = await labelStage(call.env.DIRECTORY, provider.name, hash, label, Date.now());
  if (refused) return refused;
  const res = await next();
  // An answer proves the credential: only now is its label kept.
  if (res.status >= 200 && res.status < 300) call.waitUntil(keepLabel(call.env.DIRECTORY, provider.name, hash, label, Date.now()).catch(() => {}));
  return res;
};
