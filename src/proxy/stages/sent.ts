// The limiter and the attempts (proxy/run.ts): the last stage, which always answers. The body's
// parsed copy is dropped first: only its bytes wait in the queue.
import type { Stage } from "../call";
import type { Deps } from "../plan";
import { run } from "../run";

const DEPS: Deps = { fetch: (input, init) => fetch(input, init), now: Date.now, random: Math.random };

export const sent: Stage = (call) => {
  call.dropJson();
  // A pooled request's limiters are its members': no client for the virtual key's own key.
  return run(call, call.route ? null : call.limiterFor(call.key), DEPS);
};
