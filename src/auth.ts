const enc = new TextEncoder();

/** Constant-time string comparison: both sides are hashed first so their lengths never leak. */
export async function safeEqual(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", enc.encode(given)),
    crypto.subtle.digest("SHA-256", enc.encode(expected)),
  ]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/** `GATEWAY_TOKENS` is a comma-separated secret; unset or empty means callers need no token. */
export async function gatewayTokenOk(configured: string | undefined, given: string | null): Promise<boolean> {
  const tokens = (configured ?? "").split(",").map((t) => t.trim()).filter(Boolean);
  if (tokens.length === 0) return true;
  if (!given) return false;
  const hits = await Promise.all(tokens.map((t) => safeEqual(given, t)));
  return hits.includes(true);
}

/** `Authorization: Bearer <token>` checked against `ADMIN_TOKEN`. */
export async function bearerOk(expected: string, header: string | undefined | null): Promise<boolean> {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  return safeEqual(m?.[1]?.trim() ?? "", expected);
}
