// OpenAI's models endpoints, `GET /v1/models` and `GET /v1/models/{model}`, so `openai.models.list()`
// and a deployment's smoke test (`curl <gateway>/openai/v1/models`) answer through a gateway as they
// do at OpenAI. Shapes from OpenAI's API reference, "Models": List models returns
// `{"object":"list","data":[Model]}`, Retrieve model one Model, each `{"id","object":"model","created"
// (Unix seconds),"owned_by"}` (https://developers.openai.com/api/reference/resources/models/methods/list
// and .../methods/retrieve). A model the account lacks is OpenAI's 404 `model_not_found` (openai.ts).
import type { Call } from "./batch-api.ts";
import { openai } from "./openai.ts";

/** What an account that names no `models` lists: the models the tests and the demo ask for. */
export const LISTED_BY_DEFAULT = ["gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "gpt-5-mini", "o4-mini", "text-embedding-3-small"];

/** 2024-05-13, a fixed date: the same list on every call. */
const CREATED = 1_715_558_400;

/** `owned_by`: OpenAI's own models say "system" (the reference's example names the owning organization). */
const model = (id: string) => ({ id, object: "model", created: CREATED, owned_by: "system" });

export function listModels(call: Call): void {
  call.json(200, { object: "list", data: (call.state.options.models ?? LISTED_BY_DEFAULT).map(model) });
}

/** An account with every model (`models: null`) has whichever is asked for. */
export function getModel(call: Call, id: string): void {
  const models = call.state.options.models;
  if (models && !models.includes(id)) {
    const err = openai.unknownModel(id);
    return call.json(err.status, err.body);
  }
  call.json(200, model(id));
}
