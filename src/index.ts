export { loadTokenizer, PromptTokenizer } from './tokenizer.js';
export type { OutputOptions } from './tokenizer.js';
export { PromptSession } from './prompt-session.js';
export type { SessionDelta } from './prompt-session.js';
export type { LoadOptions, EncodeOptions, DecodeOptions, ChatOptions } from './options.js';
export type { TemplateLimits } from './template/render.js';
export { DEFAULT_LIMITS as DEFAULT_TEMPLATE_LIMITS } from './template/render.js';
export { PromptencError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { BUNDLED_MODELS } from './load.js';
export type { ChatMessage, ToolCall, ToolDefinition, ContentPart } from './template/messages.js';
export type { Backend, BackendKind, BackendChoice } from './backend/types.js';
export { normalizeMessages, detectContentFormat } from './chat-messages.js';
export type { NormalizeMode, ContentFormat } from './chat-messages.js';
export type { ChatTokenBreakdown } from './accounting.js';
export {
  createOutputParser,
  parseAssistantOutput,
  toAssistantMessage,
  OutputCollector,
  OUTPUT_FORMATS,
  outputFormatOfTemplate,
  promptOpensReasoning,
} from './output/index.js';
export type {
  OutputFormat,
  OutputEvent,
  OutputParser,
  OutputParserOptions,
  ParsedOutput,
  ParsedToolCall,
  StreamDecoder,
  DecoderOptions,
  AssistantMessageOptions,
} from './output/index.js';
