/** The contract's gateway-made errors, plus bad input, an unreachable limiter, and the admin API's own. */
export type GatewayErrorType =
  | "unknown_provider"
  | "body_too_large"
  | "request_too_large"
  | "unauthorized"
  | "queue_timeout"
  | "upstream_unreachable"
  | "limiter_unavailable"
  | "overloaded"
  | "invalid_request"
  | "config_error"
  | "invalid_config"
  | "unknown_key"
  | "not_found"
  | "cache_miss"
  | "budget_exceeded"
  | "pool_unavailable"
  | "forbidden"
  | "key_store_unavailable"
  | "conflict"
  | "request_timeout"
  | "tier_unavailable";

const STATUS: Record<GatewayErrorType, number> = {
  unknown_provider: 404,
  body_too_large: 413,
  request_too_large: 413,
  unauthorized: 401,
  queue_timeout: 429,
  upstream_unreachable: 502,
  limiter_unavailable: 503,
  overloaded: 503,
  invalid_request: 400,
  config_error: 500,
  invalid_config: 400,
  unknown_key: 404,
  not_found: 404,
  cache_miss: 504,
  budget_exceeded: 402,
  pool_unavailable: 503,
  forbidden: 403,
  key_store_unavailable: 503,
  conflict: 409,
  request_timeout: 408,
  tier_unavailable: 429,
};

export function gatewayError(type: GatewayErrorType, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { type, message } }), {
    status: STATUS[type],
    headers: { "content-type": "application/json", "x-slotgate-error": type, ...headers },
  });
}

/** Whole seconds for a `retry-after` header, never 0 (0 reads as "now" and invites a stampede). */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}
