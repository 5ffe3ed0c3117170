// The label stage: a caller's `x-slotgate-limit-key` labels, held to LABELS_PER_CREDENTIAL per
// credential. Each label is a limiter and a Directory row of its own, so without a bound one caller
// could grow storage, and push pool members out of the operator's lists. The Directory counts them
// and keeps a label only once the provider has answered its credential (issue 39): a loop over
// random keys, each with its labels, writes nothing. An isolate asks once a day per label it has seen.
import { remember } from "../bounded";
import { type Directory, directoryOf, LABELS_PER_CREDENTIAL } from "../directory/object";
import { gatewayError } from "./errors";

/** Labels this isolate has seen kept, with when: asked again after a day (the Directory keeps a label 30 days from its last use). */
const admitted = new Map<string, number>();
const KEPT = 4_096;
const RECHECK_MS = 86_400_000;

const idOf = (provider: string, credentialHash: string, label: string) => `${provider}:${credentialHash}\n${label}`;

/** null: no label, or one the credential may use. A Response: 400 `invalid_request`, nothing sent. Writes nothing. */
export async function labelStage(ns: DurableObjectNamespace<Directory>, provider: string, credentialHash: string, label: string | null, now: number): Promise<Response | null> {
  if (label === null) return null;
  const at = admitted.get(idOf(provider, credentialHash, label));
  if (at !== undefined && now - at < RECHECK_MS) return null;
  let ok: boolean;
  try {
    ok = await directoryOf(ns).mayUseLabel(`${provider}:${credentialHash}`, label, now);
  } catch {
    // The bound is on storage, not on who may call: an unreachable Directory lets this one go, and is asked again next time.
    return null;
  }
  if (!ok)
    return gatewayError("invalid_request", `this credential already uses ${LABELS_PER_CREDENTIAL} x-slotgate-limit-key labels (each a limiter of its own) in the last 30 days: reuse one of them`);
  return null;
}

/** After a 2xx: the provider answered the credential, so its label is kept (once a day per isolate). */
export async function keepLabel(ns: DurableObjectNamespace<Directory>, provider: string, credentialHash: string, label: string, now: number): Promise<void> {
  const id = idOf(provider, credentialHash, label);
  const at = admitted.get(id);
  if (at !== undefined && now - at < RECHECK_MS) return;
  if (await directoryOf(ns).admitLabel(`${provider}:${credentialHash}`, label, now)) remember(admitted, id, now, KEPT);
}
