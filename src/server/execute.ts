import { PromptencError } from '../errors.js';
import type { Endpoint, HandlerContext } from './endpoint.js';
import { failureOf } from './errors.js';
import { validateBody } from './validate.js';

/** A finished request: the status and the serialized body, plus what its log line reports. */
export interface JobResult {
  status: number;
  bytes: Uint8Array;
  model?: string;
  tokens?: number;
  reused?: number;
  error?: { code: string; message: string; stack?: string };
}

const encoder = new TextEncoder();

export function parseJsonBody(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new PromptencError('E_JSON_INVALID', 'body: is empty; expected a JSON object');
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (err) {
    throw new PromptencError('E_JSON_INVALID', `body: is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Run one endpoint and serialize its answer or its error. `raw` bodies (large ones, parsed
 * off the event loop) are parsed and validated here with the same schema fastify uses.
 */
export async function execute(ctx: HandlerContext, endpoint: Endpoint, input: { raw?: Uint8Array; body?: unknown }): Promise<JobResult> {
  try {
    let body = input.body;
    if (input.raw !== undefined) {
      body = parseJsonBody(input.raw);
      if (endpoint.schema) validateBody(endpoint.schema, body);
    }
    const out = await endpoint.run(ctx, body);
    return { status: 200, bytes: encoder.encode(JSON.stringify(out.body)), model: out.model, tokens: out.tokens, reused: out.reused };
  } catch (err) {
    const f = failureOf(err);
    const e = f.body.error;
    return { status: f.status, bytes: encoder.encode(JSON.stringify(f.body)), error: { code: e.code, message: e.message, stack: f.stack } };
  }
}
