// The request's span (OTEL_*): off, this one check; on, a span that ends with its answer.
import { requestSpan } from "../../observe/spans";
import type { Stage } from "../call";

export const traced: Stage = async (call, next) => {
  const config = call.settings.trace;
  const span = config && requestSpan(config, call.req.headers, call.start, call.asked.provider.name, call.asked.method, call.op, call.waitUntil);
  if (!span) return next();
  call.trace = span;
  try {
    return span.answer(await next(), call.waitUntil);
  } catch (err) {
    span.close(Date.now(), "internal_error");
    throw err;
  }
};
