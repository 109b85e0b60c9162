import { PromptencError, type ErrorCode } from '../errors.js';

/**
 * The error body every endpoint answers with: OpenAI's shape (`{error: {message, type, param,
 * code}}`, which vLLM's ErrorResponse also has). `code` is promptenc's stable string code
 * (vLLM puts the HTTP status there; OpenAI a string), `param` the field the message names.
 */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: ErrorCode };
}

export interface HttpFailure {
  status: number;
  body: ErrorBody;
  /** For the request's log line: the stack of an unexpected error. */
  stack?: string;
}

/** HTTP status and OpenAI-style type per code (vLLM's types: BadRequestError, NotFoundError, ...). */
const STATUS: Partial<Record<ErrorCode, [number, string]>> = {
  E_MODEL_NOT_FOUND: [404, 'NotFoundError'],
  E_ROUTE_NOT_FOUND: [404, 'NotFoundError'],
  E_BODY_TOO_LARGE: [413, 'RequestEntityTooLargeError'],
  E_INTERNAL: [500, 'InternalServerError'],
  E_IO: [500, 'InternalServerError'],
  E_NATIVE_UNAVAILABLE: [500, 'InternalServerError'],
  E_TOKENIZER_NOT_FOUND: [500, 'InternalServerError'],
  E_TOKENIZER_INVALID: [500, 'InternalServerError'],
};

/** The field an error message starts with (`messages[2].content: expected ...`), if any. */
function paramOf(message: string): string | null {
  const m = /^([A-Za-z_][\w.]*(?:\[\d+\][\w.]*)*): /.exec(message);
  return m ? m[1]! : null;
}

export function failureOf(err: unknown): HttpFailure {
  if (err instanceof PromptencError) {
    const [status, type] = STATUS[err.code] ?? [400, 'BadRequestError'];
    return {
      status,
      body: { error: { message: err.message, type, param: paramOf(err.message), code: err.code } },
      stack: status >= 500 ? err.stack : undefined,
    };
  }
  const e = err as Error | undefined;
  return {
    status: 500,
    body: { error: { message: `internal error: ${e?.message ?? String(err)}`, type: 'InternalServerError', param: null, code: 'E_INTERNAL' } },
    stack: e?.stack,
  };
}
