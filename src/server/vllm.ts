/**
 * vLLM's tokenization and render endpoints, in vLLM's shapes:
 * - POST /tokenize, POST /detokenize: vllm/entrypoints/serve/tokenize/protocol.py
 *   (TokenizeCompletionRequest, TokenizeChatRequest, TokenizeResponse, DetokenizeRequest,
 *   DetokenizeResponse) and serving.py;
 * - POST /v1/chat/completions/render, POST /v1/completions/render: serve/render/api_router.py
 *   and serving.py, answering a GenerateRequest (serve/disagg/protocol.py).
 * Field lists and defaults are cited in docs/server.md.
 */
import { randomUUID } from 'node:crypto';
import { PromptencError } from '../errors.js';
import { toIdArray } from '../options.js';
import { CHAT_PROPERTIES, encodeChat, sessionFields, type ChatFields } from './chat.js';
import { idList, objectSchema, TOKEN_IDS, type Endpoint, type HandlerContext, type Outcome } from './endpoint.js';
import type { ServedModel } from './models.js';

const COMPLETION_PROPERTIES = {
  model: { type: ['string', 'null'] },
  prompt: { type: 'string' },
  add_special_tokens: { type: 'boolean' },
  return_token_strs: { type: ['boolean', 'null'] },
};

/** TokenizeRequest is a union: the chat form when `messages` is present, else the completion form. */
export const TOKENIZE_SCHEMA = {
  type: 'object',
  if: { required: ['messages'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword
  then: objectSchema({ ...CHAT_PROPERTIES, return_token_strs: { type: ['boolean', 'null'] } }, ['messages']),
  else: objectSchema(COMPLETION_PROPERTIES, ['prompt']),
};

async function tokenStrs(model: ServedModel, ids: Uint32Array): Promise<string[]> {
  const strings = await model.tokenStrings();
  return Array.from(ids, (id) => strings.token(id) ?? '');
}

export async function vllmTokenize(ctx: HandlerContext, body: any): Promise<Outcome> {
  const model = ctx.models.resolve(body.model);
  let ids: Uint32Array;
  let extra: Record<string, unknown> = {};
  let reused: number | undefined;
  if (body.messages !== undefined) {
    const enc = encodeChat(model, body as ChatFields, ctx.sessions);
    ids = enc.ids;
    reused = enc.reused;
    extra = sessionFields(body, enc);
  } else {
    // TokenizeCompletionRequest.add_special_tokens defaults to true.
    ids = model.tok.encode(body.prompt, { addSpecialTokens: body.add_special_tokens !== false });
  }
  const out = {
    count: ids.length,
    max_model_len: model.maxModelLen,
    tokens: idList(ids),
    token_strs: body.return_token_strs === true ? await tokenStrs(model, ids) : null,
    ...extra,
  };
  return { body: out, model: model.spec.id, tokens: ids.length, reused };
}

function detokenize(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  const ids = toIdArray(body.tokens, 'tokens');
  return { body: { prompt: model.tok.decode(ids) }, model: model.spec.id, tokens: ids.length };
}

const SAMPLING_DEFAULTS = {
  n: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  repetition_penalty: 1,
  temperature: 1,
  top_p: 1,
  top_k: 0,
  min_p: 0,
  seed: null,
  stop: null,
  stop_token_ids: null,
  ignore_eos: false,
  min_tokens: 0,
  logprobs: null,
  prompt_logprobs: null,
  skip_special_tokens: true,
  spaces_between_special_tokens: true,
  include_stop_str_in_output: false,
} as const;

/**
 * The sampling parameters vLLM would run: the request's values over SamplingParams' defaults
 * (vllm/sampling_params.py), and max_tokens as get_max_tokens sets it (the request's
 * max_completion_tokens or max_tokens, at most what the context leaves). Only the fields an
 * OpenAI request can set; vLLM's internal fields (`_all_stop_token_ids`, ...) are not shown.
 */
function samplingParams(body: any, model: ServedModel, promptLength: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...SAMPLING_DEFAULTS };
  for (const k of Object.keys(SAMPLING_DEFAULTS)) if (body[k] !== undefined && body[k] !== null) out[k] = body[k];
  if (typeof body.logprobs === 'boolean') out.logprobs = body.logprobs ? (body.top_logprobs ?? 0) : null;
  const requested = body.max_completion_tokens ?? body.max_tokens ?? null;
  const room = model.maxModelLen === null ? null : Math.max(0, model.maxModelLen - promptLength);
  out.max_tokens = requested === null ? room : room === null ? requested : Math.min(requested, room);
  return out;
}

function generateRequest(
  prefix: string,
  body: any,
  model: ServedModel,
  ids: Uint32Array,
  prompt: string | undefined,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  if (ids.length === 0) throw new PromptencError('E_ARGUMENT', 'prompt: no token_ids rendered (vLLM refuses an empty prompt)');
  return {
    request_id: `${prefix}-${randomUUID().replaceAll('-', '')}`,
    token_ids: idList(ids),
    features: null,
    sampling_params: samplingParams(body, model, ids.length),
    model: body.model ?? null,
    stream: body.stream === true,
    stream_options: body.stream === true ? (body.stream_options ?? null) : null,
    cache_salt: body.cache_salt ?? null,
    priority: body.priority ?? 0,
    kv_transfer_params: null,
    // Not in vLLM's GenerateRequest: the rendered text, which its users have asked for.
    ...(prompt !== undefined ? { prompt } : {}),
    ...extra,
  };
}

const SAMPLING_PROPERTIES = {
  max_tokens: { type: ['integer', 'null'], minimum: 0 },
  max_completion_tokens: { type: ['integer', 'null'], minimum: 0 },
  n: { type: ['integer', 'null'], minimum: 1 },
  temperature: { type: ['number', 'null'] },
  top_p: { type: ['number', 'null'] },
  top_k: { type: ['integer', 'null'] },
  min_p: { type: ['number', 'null'] },
  presence_penalty: { type: ['number', 'null'] },
  frequency_penalty: { type: ['number', 'null'] },
  repetition_penalty: { type: ['number', 'null'] },
  seed: { type: ['integer', 'null'] },
  stop: { type: ['string', 'array', 'null'], items: { type: 'string' } },
  stop_token_ids: { type: ['array', 'null'], items: { type: 'integer' } },
  stream: { type: ['boolean', 'null'] },
  stream_options: { type: ['object', 'null'] },
  cache_salt: { type: ['string', 'null'] },
  priority: { type: 'integer' },
  use_beam_search: { type: 'boolean' },
};

export const CHAT_RENDER_SCHEMA = objectSchema({ ...CHAT_PROPERTIES, ...SAMPLING_PROPERTIES }, ['messages']);

function chatRender(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  if (body.use_beam_search === true) throw new PromptencError('E_ARGUMENT', 'use_beam_search: beam search is not supported by the render endpoint');
  const enc = encodeChat(model, body as ChatFields, ctx.sessions);
  return {
    body: generateRequest('chatcmpl', body, model, enc.ids, enc.prompt, sessionFields(body, enc)),
    model: model.spec.id,
    tokens: enc.ids.length,
    reused: enc.reused,
  };
}

/** CompletionRequest.prompt: a string, a list of strings, a list of ids, or a list of id lists. */
export const COMPLETION_RENDER_SCHEMA = objectSchema(
  {
    model: { type: ['string', 'null'] },
    prompt: {
      anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: { type: 'string' } }, TOKEN_IDS, { type: 'array', minItems: 1, items: TOKEN_IDS }],
    },
    add_special_tokens: { type: 'boolean' },
    suffix: { type: ['string', 'null'] },
    echo: { type: ['boolean', 'null'] },
    ...SAMPLING_PROPERTIES,
  },
  ['prompt'],
);

function completionRender(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  if (body.suffix != null) throw new PromptencError('E_ARGUMENT', 'suffix: is not currently supported');
  const p = body.prompt;
  const prompts: Array<string | number[]> = typeof p === 'string' ? [p] : p.length > 0 && typeof p[0] === 'number' ? [p] : p;
  // CompletionRequest.add_special_tokens defaults to true; id prompts are taken as they are.
  const addSpecialTokens = body.add_special_tokens !== false;
  let tokens = 0;
  const out = prompts.map((one) => {
    const ids = typeof one === 'string' ? model.tok.encode(one, { addSpecialTokens }) : toIdArray(one, 'prompt');
    tokens += ids.length;
    return generateRequest('cmpl', body, model, ids, typeof one === 'string' ? one : undefined, {});
  });
  return { body: out, model: model.spec.id, tokens };
}

export const vllmEndpoints: Endpoint[] = [
  { method: 'POST', path: '/detokenize', schema: objectSchema({ model: { type: ['string', 'null'] }, tokens: TOKEN_IDS }, ['tokens']), run: detokenize },
  { method: 'POST', path: '/v1/chat/completions/render', schema: CHAT_RENDER_SCHEMA, run: chatRender },
  { method: 'POST', path: '/v1/completions/render', schema: COMPLETION_RENDER_SCHEMA, run: completionRender },
];
