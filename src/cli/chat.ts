import { Command, Option } from 'commander';
import { PromptencError, describeValue } from '../errors.js';
import { checkKwargs } from '../chat-options.js';
import type { NormalizeMode } from '../chat-messages.js';
import type { PromptTokenizer } from '../tokenizer.js';
import type { ChatOptions } from '../options.js';
import type { ChatMessage } from '../template/messages.js';
import type { ChatTokenBreakdown } from '../accounting.js';
import { addModelOptions, loadFromFlags, sourceFromFlags, parseJsonFlag, readJsonFile, readTextFile, writeOut, UsageError, type ModelFlags } from './common.js';
import { formatPretty } from './pretty.js';
import { runJsonl } from './jsonl.js';

interface ChatFlags extends ModelFlags {
  messages: string;
  tools?: string;
  template?: string;
  kwargs?: string;
  normalize: NormalizeMode;
  contentSpecialTokens: 'special' | 'text';
  generationPrompt: boolean;
  maxTokens?: string;
  format: 'json' | 'prompt' | 'ids' | 'count' | 'pretty' | 'breakdown';
  jsonl?: string;
  threads?: string;
}

function firstWords(m: ChatMessage): string {
  const text = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => p.text ?? '').join(' ') : '';
  const shown = (text || (m.tool_calls ?? []).map((t) => `${t.function.name}(…)`).join(' ')).replace(/\s+/g, ' ').trim();
  return shown.length > 40 ? `${shown.slice(0, 39)}…` : shown;
}

/** A per-message table: role, first words, tokens, share of the total. */
export function formatBreakdown(messages: ChatMessage[], b: ChatTokenBreakdown, toolsGiven = false): string {
  const pct = (n: number) => (b.total === 0 ? '0.0%' : `${((100 * n) / b.total).toFixed(1)}%`);
  const rows: string[][] = [['#', 'role', 'first words', 'tokens', 'share']];
  messages.forEach((m, i) => {
    // DeepSeek-V3's template writes tool calls only when content is None, which vLLM's normalization makes ''.
    const dropped = b.messages[i] === 0 && Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    rows.push([String(i), m.role, dropped ? '(tool calls the template leaves out)' : firstWords(m), String(b.messages[i]), pct(b.messages[i]!)]);
  });
  const ignored = b.toolsIgnored ?? (toolsGiven && b.tools === 0);
  const toolsNote = ignored ? '(the template renders none of the tools it was given)' : toolsGiven ? '(tool definitions and their scaffolding)' : '';
  rows.push(['', 'tools', toolsNote, String(b.tools), pct(b.tools)]);
  rows.push(['', 'template', '(role headers, BOS, generation prompt)', String(b.template), pct(b.template)]);
  rows.push(['', 'total', '', String(b.total), '100.0%']);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => [...r[c]!].length)));
  return `${rows
    .map((r) =>
      r
        .map((cell, c) => (c >= 3 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** The messages file holds an array of messages or an object { messages, tools }. */
export async function readConversation(file: string): Promise<{ messages: unknown; tools?: unknown }> {
  const data = await readJsonFile(file, '--messages');
  if (Array.isArray(data)) return { messages: data };
  if (typeof data === 'object' && data !== null && 'messages' in data) {
    const d = data as { messages: unknown; tools?: unknown };
    return { messages: d.messages, tools: d.tools };
  }
  throw new PromptencError(
    'E_MESSAGES_INVALID',
    `--messages ${file}: expected an array of messages or an object {messages, tools}, received ${describeValue(data)}`,
  );
}

export async function chatOptionsFromFlags(flags: ChatFlags, fileTools: unknown): Promise<ChatOptions> {
  const tools = flags.tools !== undefined ? await readJsonFile(flags.tools, '--tools') : fileTools;
  const kwargs = flags.kwargs !== undefined ? parseJsonFlag(flags.kwargs, '--kwargs') : undefined;
  if (kwargs !== undefined) checkKwargs(kwargs, 'cli');
  return {
    tools: tools as ChatOptions['tools'],
    addGenerationPrompt: flags.generationPrompt,
    chatTemplate: flags.template !== undefined ? await readTextFile(flags.template, '--template') : undefined,
    kwargs,
    normalize: flags.normalize,
    ...(flags.contentSpecialTokens === 'text' && { contentSpecialTokens: 'text' as const }),
  };
}

/**
 * A model without a chat template: the library's error says options.chatTemplate; the CLI says
 * how to give one (the bundled gpt-oss tokenizer ships none).
 */
function withTemplateHint(tok: PromptTokenizer, err: unknown): unknown {
  if (!(err instanceof PromptencError) || err.code !== 'E_TEMPLATE_MISSING' || !err.message.includes('has no chat template')) return err;
  const harmony = /gpt-?oss/i.test(tok.tokenizerPath)
    ? " For gpt-oss that is the harmony template: chat_template.jinja of openai/gpt-oss-20b on the Hugging Face hub, or llama.cpp's models/templates/openai-gpt-oss-120b.jinja."
    : '';
  return new PromptencError('E_TEMPLATE_MISSING', `${tok.tokenizerPath} has no chat template; pass one with --template FILE.${harmony}`, { cause: err });
}

export function chatCommand(): Command {
  return addModelOptions(new Command('chat').description('render a conversation with the chat template and encode it'))
    .option('--messages <file>', 'JSON: an array of messages, or {"messages": [...], "tools": [...]} ("-" for stdin)')
    .option('--jsonl <file>', 'JSONL conversations in ("-" for stdin), one {"ids","count"} line out per record, on worker threads')
    .option('--threads <n>', 'worker threads for --jsonl (default: cores - 1, at least 1)')
    .option('--tools <file>', 'JSON array of tool definitions (overrides tools in the messages file)')
    .option('--template <file>', "a Jinja chat template that overrides the model's")
    .option('--kwargs <json>', 'extra template variables, e.g. \'{"enable_thinking": false}\'')
    .addOption(
      new Option('--normalize <mode>', 'messages as vLLM hands them to the template (vllm), or exactly as given, as transformers does (none)')
        .choices(['vllm', 'none'])
        .default('vllm'),
    )
    .addOption(
      new Option(
        '--content-special-tokens <mode>',
        "special-token text in messages, tool results and arguments: control tokens, as transformers does (special), or plain text, only the template's own tokens special (text)",
      )
        .choices(['special', 'text'])
        .default('special'),
    )
    .option('--no-generation-prompt', 'do not append the assistant generation prompt')
    .option('--max-tokens <n>', 'drop the oldest turns first so the prompt fits in N tokens')
    .addOption(new Option('--format <fmt>', 'output format').choices(['json', 'prompt', 'ids', 'count', 'pretty', 'breakdown']).default('json'))
    .action(async (flags: ChatFlags) => {
      if ((flags.jsonl === undefined) === (flags.messages === undefined)) throw new UsageError('one of --messages FILE or --jsonl FILE is required');
      if (flags.jsonl !== undefined) {
        const chat = await chatOptionsFromFlags(flags, undefined);
        const count = flags.format === 'count';
        return runJsonl({
          input: flags.jsonl,
          mode: 'chat',
          source: sourceFromFlags(flags),
          backend: flags.backend ?? 'auto',
          encoding: flags.encoding,
          count,
          addSpecialTokens: false,
          chat,
          threads: flags.threads,
        });
      }
      const tok = await loadFromFlags(flags);
      const convo = await readConversation(flags.messages!);
      const opts = await chatOptionsFromFlags(flags, convo.tools);
      try {
        await renderConversation(tok, flags, convo.messages as ChatMessage[], opts);
      } catch (err) {
        throw withTemplateHint(tok, err);
      }
    });
}

async function renderConversation(tok: PromptTokenizer, flags: ChatFlags, given: ChatMessage[], opts: ChatOptions): Promise<void> {
  let messages = given;
  if (flags.maxTokens !== undefined) {
    if (!/^\d+$/.test(flags.maxTokens)) throw new UsageError(`--max-tokens: expected a non-negative integer, received ${JSON.stringify(flags.maxTokens)}`);
    const fit = tok.fitChat(messages, { ...opts, maxTokens: Number(flags.maxTokens) });
    if (fit.dropped.length > 0) process.stderr.write(`promptenc: dropped ${fit.dropped.length} message(s) to fit ${flags.maxTokens} tokens\n`);
    messages = fit.messages;
  }
  if (flags.format === 'breakdown') {
    process.stdout.write(
      formatBreakdown(
        messages,
        tok.countChatByMessage(messages, opts),
        opts.tools !== undefined && opts.tools !== null && (opts.tools as unknown[]).length > 0,
      ),
    );
    return;
  }
  const prompt = tok.renderChat(messages, opts);
  if (flags.format === 'prompt') {
    process.stdout.write(prompt);
    return;
  }
  // encodeChat semantics: the rendered prompt with no extra special tokens (with 'text', only the scaffolding's).
  const ids = opts.contentSpecialTokens === 'text' ? tok.encodeChat(messages, opts) : tok.encode(prompt, { addSpecialTokens: false });
  switch (flags.format) {
    case 'count':
      writeOut(String(ids.length));
      return;
    case 'ids':
      writeOut(Array.from(ids).join(' '));
      return;
    case 'pretty':
      process.stdout.write(formatPretty(tok, ids, Boolean(process.stdout.isTTY)));
      return;
    default:
      writeOut(JSON.stringify({ prompt, ids: Array.from(ids), count: ids.length, backend: tok.backend }));
  }
}
