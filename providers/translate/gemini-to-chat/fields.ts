// A chained pair (gemini -> chat -> X) refuses what X cannot honour in the inner half, naming the chat field: the
// Gemini client is told the field it sent instead. Fields without a Gemini counterpart keep their chat name.
import { GatewayError } from "../../../core/errors.ts";
import { Unsupported, type Translator } from "../../../core/contracts/translator.ts";

/** Chat fields by the Gemini field a client sent (errors and x-mg-dropped-params of a chain name these). */
export const GEMINI_FIELD: Readonly<Record<string, string>> = {
  n: "generationConfig.candidateCount",
  temperature: "generationConfig.temperature",
  top_p: "generationConfig.topP",
  max_tokens: "generationConfig.maxOutputTokens",
  stop: "generationConfig.stopSequences",
  seed: "generationConfig.seed",
  presence_penalty: "generationConfig.presencePenalty",
  frequency_penalty: "generationConfig.frequencyPenalty",
  response_format: "generationConfig.responseMimeType",
  "response_format.json_schema.schema": "generationConfig.responseSchema",
  reasoning_effort: "generationConfig.thinkingConfig",
  tools: "tools",
  tool_choice: "toolConfig",
};

function renamed(err: GatewayError): GatewayError {
  const field = err.details?.field;
  const name = typeof field === "string" ? GEMINI_FIELD[field] : undefined;
  if (!name) return err;
  // "n > 1 is not supported…" -> "generationConfig.candidateCount > 1 is not supported…"; else the field in front.
  const message = err.message.startsWith(`${field} `) ? name + err.message.slice((field as string).length) : `${name}: ${err.message}`;
  return new GatewayError(err.status, err.code, message, { details: { ...err.details, field: name }, retryAfter: err.retryAfter, headers: err.headers, cause: err.cause, type: err.type });
}

export function withGeminiFields<S>(tr: Translator<S>): Translator<S> {
  return {
    ...tr,
    request(body, target, opts) {
      try {
        return tr.request(body, target, opts);
      } catch (e) {
        if (e instanceof Unsupported) throw new Unsupported(renamed(e.error));
        throw e instanceof GatewayError ? renamed(e) : e;
      }
    },
  };
}
