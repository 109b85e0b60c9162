import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { PromptencError, describeValue } from '../errors.js';

/**
 * One Ajv for the route schemas, used by fastify on the event loop and by the worker threads
 * on large bodies, so both reject the same requests with the same message. No coercion and
 * no defaults written into the body (handlers apply each peer's defaults themselves); extra
 * fields are allowed, as OpenAI-compatible servers allow them.
 */
const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false, strict: false });

const compiled = new WeakMap<object, ValidateFunction>();

export function compileSchema(schema: object): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/** `/messages/0/content` → `messages[0].content`. */
function fieldName(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

function valueAt(body: unknown, pointer: string): unknown {
  let v: unknown = body;
  for (const raw of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[raw.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return v;
}

/** An Ajv error as a PromptencError whose message starts with the field: `tokens[3]: expected integer, received "x"`. */
export function schemaError(err: ErrorObject, body: unknown): PromptencError {
  const at = fieldName(err.instancePath);
  if (err.keyword === 'required') {
    const missing = (err.params as { missingProperty: string }).missingProperty;
    return new PromptencError('E_REQUEST_INVALID', `${at === '' ? missing : `${at}.${missing}`}: is required`);
  }
  const expected = err.message?.replace(/^must (be )?/, '') ?? 'a valid value';
  const field = at === '' ? 'body' : at;
  return new PromptencError('E_REQUEST_INVALID', `${field}: expected ${expected}, received ${describeValue(valueAt(body, err.instancePath))}`);
}

export function validateBody(schema: object, body: unknown): void {
  const v = compileSchema(schema);
  if (!v(body)) throw schemaError(v.errors![0]!, body);
}
