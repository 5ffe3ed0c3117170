// Who may call through (pools/admit.ts), then the settings (a malformed variable: 500 naming it),
// then what is asked (proxy/asked.ts): each refused before a body is read or an object called.
import { operationOf } from "../../observe/genai";
import { admit } from "../../pools/admit";
import { askedOf } from "../asked";
import type { Stage } from "../call";
import { settingsOf } from "../settings";

/** The token or virtual key first: a stranger learns nothing, not even which providers or variables exist. */
export const door: Stage = async (call, next) => {
  const admitted = await admit(call.env, call.req, call.incoming);
  if (admitted.kind === "refused") return admitted.res;
  call.found = admitted.found;
  const settings = settingsOf(call.env);
  if (settings instanceof Response) return settings;
  call.settings = settings;
  const asked = askedOf(call.req, call.incoming, settings, call.start);
  if (asked instanceof Response) return asked;
  call.asked = asked;
  call.op = operationOf(asked.method, asked.rest);
  return next();
};
