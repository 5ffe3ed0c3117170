// Strings shaped like virtual keys that no gateway minted: what an attacker sends. No imports, so
// both the workerd tests and the end-to-end tests (Node) use them.
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const pick = (alphabet: string, n: number) => [...crypto.getRandomValues(new Uint8Array(n))].map((b) => alphabet[b % alphabet.length]).join("");

/** A random string of a tagged key's shape (never minted): `sgk-`, 43, a hex digit, 8. */
export const randomTagged = () => `sgk-${pick(B64URL, 43)}${pick("0123456789abcdef", 1)}${pick(B64URL, 8)}`;
/** A random string of an old key's shape: `sgk-` and 43. */
export const randomLegacy = () => `sgk-${pick(B64URL, 43)}`;
