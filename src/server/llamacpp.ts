/**
 * llama.cpp's server endpoints, in its shapes (tools/server/README.md and server.cpp's
 * handlers): POST /tokenize `{content, add_special=false, parse_special=true,
 * with_pieces=false}` → `{tokens}`, POST /detokenize `{tokens}` → `{content}`, POST
 * /apply-template `{messages, ...}` → `{prompt}`. They live under /llamacpp (a llama.cpp
 * client's base URL); /apply-template and a /tokenize body with `content` also answer at the root.
 */
import { isUtf8 } from 'node:buffer';
import { toIdArray } from '../options.js';
import { CHAT_PROPERTIES, chatOptions, cutAfterFinalMessage, type ChatFields } from './chat.js';
import { idList, objectSchema, TOKEN_IDS, type Endpoint, type HandlerContext, type Outcome } from './endpoint.js';

export const LLAMA_TOKENIZE_SCHEMA = objectSchema(
  {
    model: { type: ['string', 'null'] },
    content: { type: 'string' },
    add_special: { type: 'boolean' },
    parse_special: { type: 'boolean' },
    with_pieces: { type: 'boolean' },
  },
  ['content'],
);

const decoder = new TextDecoder('utf-8');

export async function llamaTokenize(ctx: HandlerContext, body: any): Promise<Outcome> {
  const model = ctx.models.resolve(body.model);
  // parse_special: false leaves control-token text as text and still matches user-defined
  // tokens (llama-vocab.cpp tokenizer_st_partition skips CONTROL and UNKNOWN attributes only):
  // HF's special vs non-special added tokens, which is splitSpecialTokens.
  const ids = model.tok.encode(body.content, { addSpecialTokens: body.add_special === true, splitSpecialTokens: body.parse_special === false });
  let tokens: unknown[];
  if (body.with_pieces === true) {
    const strings = await model.tokenStrings();
    tokens = Array.from(ids, (id) => {
      const bytes = strings.bytes(id);
      // server.cpp: the piece as a string when it is valid UTF-8, else its bytes as integers.
      return { id, piece: isUtf8(bytes) ? decoder.decode(bytes) : Array.from(bytes) };
    });
  } else {
    tokens = idList(ids);
  }
  return { body: { tokens }, model: model.spec.id, tokens: ids.length };
}

function llamaDetokenize(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  const ids = toIdArray(body.tokens, 'tokens');
  // llama.cpp's tokens_to_str renders special tokens too: decode without skipping them.
  return { body: { content: model.tok.decode(ids) }, model: model.spec.id, tokens: ids.length };
}

const APPLY_TEMPLATE_SCHEMA = objectSchema(CHAT_PROPERTIES, ['messages']);

/** The prompt string only, as llama.cpp's /apply-template (add_generation_prompt defaults to true there too). */
function applyTemplate(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  const f = body as ChatFields;
  let prompt = model.tok.renderChat(f.messages, chatOptions(model, f));
  if (f.continue_final_message === true) prompt = cutAfterFinalMessage(prompt, f.messages);
  return { body: { prompt }, model: model.spec.id };
}

export const llamacppEndpoints: Endpoint[] = [
  { method: 'POST', path: '/llamacpp/tokenize', schema: LLAMA_TOKENIZE_SCHEMA, run: llamaTokenize },
  {
    method: 'POST',
    path: '/llamacpp/detokenize',
    schema: objectSchema({ model: { type: ['string', 'null'] }, tokens: TOKEN_IDS }, ['tokens']),
    run: llamaDetokenize,
  },
  { method: 'POST', path: '/llamacpp/apply-template', schema: APPLY_TEMPLATE_SCHEMA, run: applyTemplate },
  { method: 'POST', path: '/apply-template', schema: APPLY_TEMPLATE_SCHEMA, run: applyTemplate },
];
