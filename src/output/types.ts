/** The shapes of the output side: formats, parse results, stream events. */

/** The model output formats promptenc parses; the rules and their sources are in docs/semantics.md. */
export const OUTPUT_FORMATS = ['glm45', 'glm47', 'deepseek-v3', 'deepseek-v3.1', 'deepseek-r1', 'qwen3', 'qwen3-coder', 'gpt-oss'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface ParsedToolCall {
  /** call_0, call_1, ... in output order (deterministic, so a stream and a one-shot parse agree). */
  id: string;
  name: string;
  /** The arguments as an object. */
  arguments: Record<string, unknown>;
  /**
   * The arguments as OpenAI's `function.arguments` string: the JSON text exactly as the model
   * wrote it for JSON formats (qwen3, deepseek, gpt-oss); Python json.dumps of `arguments` for
   * the key/value formats (glm, qwen3-coder), as vLLM returns them.
   */
  argumentsText: string;
}

export interface ParsedOutput {
  /** Text before `</think>` (or harmony's analysis channel), trimmed; null when there is none. */
  reasoning: string | null;
  /** What the user receives: the text outside reasoning and tool calls, trimmed; null when empty. */
  content: string | null;
  toolCalls: ParsedToolCall[];
  /** Anything not taken as written: unfinished or malformed calls (kept in content), ignored text. */
  warnings: string[];
}

export type OutputEvent =
  | { type: 'reasoning'; text: string }
  | { type: 'content'; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; argumentsText: string }
  | { type: 'tool_call_end'; index: number; arguments: Record<string, unknown> }
  | { type: 'warning'; message: string };

export interface OutputParserOptions {
  format: OutputFormat;
  /** The request's tools (OpenAI shape): their JSON schemas type the string values of glm and qwen3-coder. */
  tools?: readonly unknown[];
  /**
   * Where the output starts. true: inside reasoning (the prompt ended with `<think>`); false:
   * outside (a `<think>` at the very start still opens reasoning). Undefined: the format's
   * default -- for formats whose models think by default, text is held until `</think>` or
   * the end shows whether it was reasoning (the text before `</think>` is reasoning whether or
   * not `<think>` opened it).
   */
  startInReasoning?: boolean;
}

export interface OutputParser {
  /** Take the next text delta; return the events it completes. */
  push(text: string): OutputEvent[];
  /** End of output: the remaining events (unfinished calls become content, with a warning). */
  end(): OutputEvent[];
}

/** A parsed call before it gets its id. */
export interface CallBody {
  name: string;
  arguments: Record<string, unknown>;
  argumentsText: string;
}

/** A tool-call region's body parsed: its calls, or why it is not one. */
export type RegionResult = { calls: CallBody[]; warnings: string[] } | { error: string };
