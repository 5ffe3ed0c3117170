import { DurableObject } from "cloudflare:workers";
export class Limiter extends DurableObject {
  async ping() { return "pong"; }
}
