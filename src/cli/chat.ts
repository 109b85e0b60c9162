import { Command, Option } from 'commander';
import { PromptencError, describeValue } from '../errors.js';
import type { ChatOptions } from '../tokenizer.js';
import { addModelOptions, loadFromFlags, parseJsonFlag, readJsonFile, readTextFile, writeOut, type ModelFlags } from './common.js';
import { formatPretty } from './pretty.js';

interface ChatFlags extends ModelFlags {
  messages: string;
  tools?: string;
  template?: string;
  kwargs?: string;
  generationPrompt: boolean;
  format: 'json' | 'prompt' | 'ids' | 'count' | 'pretty';
}

/** The messages file holds an array of messages or an object { messages, tools }. */
export async function readConversation(file: string): Promise<{ messages: unknown; tools?: unknown }> {
  const data = await readJsonFile(file, '--messages');
  if (Array.isArray(data)) return { messages: data };
  if (typeof data === 'object' && data !== null && 'messages' in data) {
    const d = data as { messages: unknown; tools?: unknown };
    return { messages: d.messages, tools: d.tools };
  }
  throw new PromptencError('E_MESSAGES_INVALID', `--messages ${file}: expected an array of messages or an object {messages, tools}, received ${describeValue(data)}`);
}

export async function chatOptionsFromFlags(flags: ChatFlags, fileTools: unknown): Promise<ChatOptions> {
  const tools = flags.tools !== undefined ? await readJsonFile(flags.tools, '--tools') : fileTools;
  return {
    tools: tools as ChatOptions['tools'],
    addGenerationPrompt: flags.generationPrompt,
    chatTemplate: flags.template !== undefined ? await readTextFile(flags.template, '--template') : undefined,
    kwargs: flags.kwargs !== undefined ? parseJsonFlag(flags.kwargs, '--kwargs') : undefined,
  };
}

export function chatCommand(): Command {
  return addModelOptions(new Command('chat').description('render a conversation with the chat template and encode it'))
    .requiredOption('--messages <file>', 'JSON: an array of messages, or {"messages": [...], "tools": [...]}')
    .option('--tools <file>', 'JSON array of tool definitions (overrides tools in the messages file)')
    .option('--template <file>', 'a Jinja chat template that overrides the model\'s')
    .option('--kwargs <json>', 'extra template variables, e.g. \'{"enable_thinking": false}\'')
    .option('--no-generation-prompt', 'do not append the assistant generation prompt')
    .addOption(new Option('--format <fmt>', 'output format').choices(['json', 'prompt', 'ids', 'count', 'pretty']).default('json'))
    .action(async (flags: ChatFlags) => {
      const tok = await loadFromFlags(flags);
      const convo = await readConversation(flags.messages);
      const opts = await chatOptionsFromFlags(flags, convo.tools);
      const messages = convo.messages as Parameters<typeof tok.renderChat>[0];
      const prompt = tok.renderChat(messages, opts);
      if (flags.format === 'prompt') {
        process.stdout.write(prompt);
        return;
      }
      // encodeChat semantics: the rendered prompt with no extra special tokens.
      const ids = tok.encode(prompt, { addSpecialTokens: false });
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
          writeOut(JSON.stringify({ prompt, ids: Array.from(ids), count: ids.length }));
      }
    });
}
