import type { Endpoint } from './endpoint.js';
import { LLAMA_TOKENIZE_SCHEMA, llamaTokenize, llamacppEndpoints } from './llamacpp.js';
import { openaiEndpoints } from './openai.js';
import { ourEndpoints } from './ours.js';
import { parseEndpoints } from './parse.js';
import { TOKENIZE_SCHEMA, vllmEndpoints, vllmTokenize } from './vllm.js';

/**
 * POST /tokenize at the root serves both peers: llama.cpp's body has `content`, vLLM's has
 * `prompt` or `messages`, so the body says which one is meant. (/detokenize bodies are the
 * same in both, so the root one is vLLM's and llama.cpp's lives under /llamacpp.)
 */
const rootTokenize: Endpoint = {
  method: 'POST',
  path: '/tokenize',
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword
  schema: { type: 'object', if: { required: ['content'] }, then: LLAMA_TOKENIZE_SCHEMA, else: TOKENIZE_SCHEMA },
  run: (ctx, body) => (body.content !== undefined ? llamaTokenize(ctx, body) : vllmTokenize(ctx, body)),
};

export const ENDPOINTS: readonly Endpoint[] = [rootTokenize, ...vllmEndpoints, ...llamacppEndpoints, ...openaiEndpoints, ...ourEndpoints, ...parseEndpoints];

const byRoute = new Map(ENDPOINTS.map((e) => [`${e.method} ${e.path}`, e]));

export function endpointFor(method: string, path: string): Endpoint | undefined {
  return byRoute.get(`${method} ${path}`);
}
