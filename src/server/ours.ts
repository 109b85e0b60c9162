/**
 * promptenc's own endpoints: POST /v1/count, the per-message accounting of
 * PromptTokenizer.countChatByMessage (src/accounting.ts), and GET /health.
 */
import { CHAT_PROPERTIES, chatOptions, type ChatFields } from './chat.js';
import { objectSchema, type Endpoint, type HandlerContext, type Outcome } from './endpoint.js';

function count(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  const f = body as ChatFields;
  const b = model.tok.countChatByMessage(f.messages, chatOptions(model, f));
  return { body: { count: b.total, by_message: b.messages, tools: b.tools, template: b.template }, model: model.spec.id, tokens: b.total };
}

function health(ctx: HandlerContext): Outcome {
  return { body: { status: 'ok', models: ctx.models.models.map((m) => m.spec.id) } };
}

export const ourEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/count', schema: objectSchema(CHAT_PROPERTIES, ['messages']), run: count },
  { method: 'GET', path: '/health', run: health },
];
