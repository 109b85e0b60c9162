/**
 * Every error promptenc throws on purpose is a PromptencError with a stable `code`.
 * Codes are part of the public API: tests and callers branch on them, never on messages.
 */
export type ErrorCode =
  | 'E_TOKENIZER_NOT_FOUND'
  | 'E_TOKENIZER_INVALID'
  | 'E_TEMPLATE'
  | 'E_TEMPLATE_MISSING'
  // A chat template hit a limit (output size, loop iterations, recursion depth): src/template/engine.
  | 'E_TEMPLATE_LIMIT'
  // contentSpecialTokens 'text': the template transforms caller text in a way whose provenance cannot be followed (src/template/engine/provenance.ts).
  | 'E_CONTENT_UNSAFE'
  | 'E_MESSAGES_INVALID'
  | 'E_ARGUMENT'
  | 'E_IDS_INVALID'
  | 'E_NATIVE_UNAVAILABLE'
  | 'E_NATIVE_UNSUPPORTED'
  | 'E_NATIVE_INTERNAL'
  // A call on a tokenizer after tokenizer.dispose().
  | 'E_DISPOSED'
  | 'E_BUDGET'
  // An encode input above LoadOptions.maxInputBytes (src/tokenizer-checks.ts).
  | 'E_INPUT_TOO_LARGE'
  | 'E_IO'
  // The HTTP service (src/server/): a request body, a route, a model name.
  | 'E_JSON_INVALID'
  | 'E_REQUEST_INVALID'
  | 'E_BODY_TOO_LARGE'
  | 'E_MODEL_NOT_FOUND'
  | 'E_ROUTE_NOT_FOUND'
  | 'E_LIMIT'
  | 'E_INTERNAL';

export class PromptencError extends Error {
  readonly code: ErrorCode;
  /** E_TEMPLATE / E_TEMPLATE_LIMIT: the chat template's line the error comes from (1-based), as Jinja2 names it. */
  readonly templateLine?: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; templateLine?: number }) {
    super(message, options);
    this.name = 'PromptencError';
    this.code = code;
    if (options?.templateLine !== undefined) this.templateLine = options.templateLine;
  }
}

/** Describe a received value for an error message: `3 of type number`, `null`, `an array`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return `${JSON.stringify(shown)} of type string`;
  }
  if (typeof value === 'object') return `an object`;
  return `${String(value)} of type ${typeof value}`;
}
