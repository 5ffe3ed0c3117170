// Every upstream attempt counted by provider and by what came back (its status class, or
// `unreachable`: no response headers), whoever sent it and whether its key was ever proven. So a bad
// key or a wrong baseUrl shows in the metrics and on the dashboard, while a key that never succeeded
// still keeps nothing of its own. The labels are bounded by construction: the provider comes from
// the configured table (a caller only picks among its rows), the class is one of five words; never
// a key, model or label a caller chose.

export const STATUS_CLASSES = ["2xx", "3xx", "4xx", "5xx", "unreachable"] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** A status's class; null (no answer came) is `unreachable`. A 1xx never reaches a Worker's fetch as a final answer. */
export function statusClass(status: number | null): StatusClass {
  if (status === null || status < 200) return "unreachable";
  if (status < 300) return "2xx";
  if (status < 400) return "3xx";
  return status < 500 ? "4xx" : "5xx";
}
