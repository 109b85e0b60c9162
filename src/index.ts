export { loadTokenizer, PromptTokenizer, PromptSession } from './tokenizer.js';
export type { LoadOptions, EncodeOptions, DecodeOptions, ChatOptions, SessionDelta } from './tokenizer.js';
export { PromptencError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { BUNDLED_MODELS } from './load.js';
export { enableFastTemplates } from './template/v8-tuning.js';
export type { ChatMessage, ToolCall, ToolDefinition, ContentPart } from './template/messages.js';
export type { Backend, BackendKind, BackendChoice } from './backend/types.js';
