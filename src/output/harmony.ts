/**
 * gpt-oss (`gpt-oss`): OpenAI's harmony format. The output after the prompt's
 * `<|start|>assistant` is a sequence of messages
 *   [<|start|>assistant] <|channel|>CHANNEL [to=RECIPIENT] [<|constrain|>json] <|message|>BODY END
 * with END one of <|end|>, <|call|>, <|return|>. The recipient may also stand before the
 * channel (`<|start|>assistant to=functions.f<|channel|>commentary json<|message|>`, the form
 * the gpt-oss template renders). Rules (openai/harmony's docs and parser; vLLM
 * vllm/tool_parsers/openai_tool_parser.py and vllm/entrypoints/harmony_utils.py; llama.cpp
 * common/chat.cpp, the GPT-OSS handler):
 * - channel `analysis` is reasoning; `final` is content; `commentary` without a recipient is a
 *   preamble shown to the user, so content;
 * - a message with a recipient `functions.NAME` is a call of NAME (another recipient, a built-in
 *   tool such as `browser.search`, is a call of that name); its body is the JSON arguments;
 * - `<|return|>` ends the turn; text outside any message is kept as content, with a warning;
 * - the stop tokens <|call|> and <|return|> may be missing at the end (engines leave them out).
 * Messages of one channel are joined by a blank line.
 */
import { parseJsonObject } from './schema.js';
import { AfterStop, Held, TrimmedChannel, emitCall, findFirst, holdback } from './stream.js';
import type { OutputEvent, OutputParser } from './types.js';

const START = '<|start|>';
const CHANNEL = '<|channel|>';
const MESSAGE = '<|message|>';
const END = '<|end|>';
const CALL = '<|call|>';
const RETURN = '<|return|>';
const TERMINATORS = [END, CALL, RETURN];
const MAX_MARKER = 13;

type Kind = { type: 'reasoning' | 'content' } | { type: 'call'; name: string };

/** What a header says: the body's channel and recipient. */
export function readHeader(header: string): Kind {
  const recipient = /(?:^|\s)to=([^\s<]+)/.exec(header)?.[1];
  // The last <|channel|> names the channel (llama.cpp's tests have a stray header before one).
  const channel = header.includes(CHANNEL) ? /^([^\s<]*)/.exec(header.slice(header.lastIndexOf(CHANNEL) + CHANNEL.length))![1] : '';
  if (recipient && recipient !== 'assistant' && recipient !== 'user') {
    return { type: 'call', name: recipient.startsWith('functions.') ? recipient.slice('functions.'.length) : recipient };
  }
  return { type: channel === 'analysis' ? 'reasoning' : 'content' };
}

type State = 'between' | 'header' | 'body' | 'done';

export class HarmonyParser implements OutputParser {
  private state: State = 'between';
  private buf = '';
  private readonly held = new Held();
  private kind: Kind = { type: 'content' };
  private readonly out: OutputEvent[] = [];
  private readonly reasoning: TrimmedChannel;
  private readonly content: TrimmedChannel;
  private readonly after: AfterStop;
  private calls = 0;
  private warnedStray = false;

  constructor() {
    this.reasoning = new TrimmedChannel('reasoning', this.out);
    this.content = new TrimmedChannel('content', this.out);
    this.after = new AfterStop(this.out);
  }

  push(text: string): OutputEvent[] {
    if (typeof text !== 'string') throw new TypeError('push(text): expected a string');
    this.buf += text;
    this.run(false);
    return this.out.splice(0);
  }

  end(): OutputEvent[] {
    this.run(true);
    return this.out.splice(0);
  }

  private stray(text: string): void {
    if (text.trim() !== '' && !this.warnedStray) {
      this.warnedStray = true;
      this.out.push({ type: 'warning', message: 'text outside a harmony message was kept in the content' });
    }
    this.content.write(text);
  }

  private run(final: boolean): void {
    for (;;) {
      switch (this.state) {
        case 'done':
          this.after.write(this.buf, RETURN);
          this.buf = '';
          return;
        case 'between': {
          const hit = findFirst(this.buf, [START, CHANNEL]);
          if (!hit) {
            const cut = final ? this.buf.length : this.buf.length - holdback(this.buf, [START, CHANNEL]);
            this.stray(this.buf.slice(0, cut));
            this.buf = this.buf.slice(cut);
            return;
          }
          this.stray(this.buf.slice(0, hit[0]));
          this.buf = this.buf.slice(hit[0] + (hit[1] === START ? START.length : 0));
          this.state = 'header';
          continue;
        }
        case 'header': {
          const hit = findFirst(this.buf, [MESSAGE, START, ...TERMINATORS]);
          if (hit && hit[1] === MESSAGE) {
            this.kind = readHeader(this.held.take(this.buf.slice(0, hit[0])));
            this.buf = this.buf.slice(hit[0] + MESSAGE.length);
            if (this.kind.type !== 'call') {
              // A second message of a channel starts after a blank line.
              const ch = this.kind.type === 'reasoning' ? this.reasoning : this.content;
              if (!ch.empty) ch.write('\n\n');
            }
            this.state = 'body';
            continue;
          }
          if (hit || final) {
            const at = hit ? hit[0] : this.buf.length;
            this.out.push({ type: 'warning', message: `a harmony header without ${MESSAGE} was kept in the content` });
            this.content.write(this.held.take(this.buf.slice(0, at)));
            this.buf = this.buf.slice(at);
            this.state = 'between';
            if (hit && hit[1] !== START) this.buf = this.buf.slice(hit[1].length);
            if (!hit) return;
            continue;
          }
          this.buf = this.held.hold(this.buf, MAX_MARKER - 1);
          return;
        }
        case 'body': {
          const markers = [...TERMINATORS, START, CHANNEL];
          const kind = this.kind;
          const hit = findFirst(this.buf, markers);
          if (kind.type !== 'call') {
            const ch = kind.type === 'reasoning' ? this.reasoning : this.content;
            const cut = hit ? hit[0] : final ? this.buf.length : this.buf.length - holdback(this.buf, markers);
            ch.write(this.buf.slice(0, cut));
            this.buf = this.buf.slice(cut);
            if (!hit) return;
          } else {
            if (!hit && !final) {
              this.buf = this.held.hold(this.buf, MAX_MARKER - 1);
              return;
            }
            const at = hit ? hit[0] : this.buf.length;
            this.call(kind.name, this.held.take(this.buf.slice(0, at)), hit !== undefined);
            this.buf = this.buf.slice(at);
            if (!hit) return;
          }
          // A terminator ends the message; <|start|> or <|channel|> (no terminator) starts the next one.
          if (TERMINATORS.includes(hit![1])) this.buf = this.buf.slice(hit![1].length);
          this.state = hit![1] === RETURN ? 'done' : 'between';
          continue;
        }
      }
    }
  }

  /**
   * A call's body ends at <|call|> -- or at the end of the output: engines stop on <|call|> (an
   * eos token of gpt-oss) and leave it out of the text, so a body whose JSON is whole is a call.
   */
  private call(name: string, body: string, ended: boolean): void {
    const text = body.trim();
    const args = text === '' ? (ended ? {} : undefined) : parseJsonObject(text);
    if (!args) {
      const why = !ended ? 'unfinished (its JSON is not whole)' : 'its arguments are not a JSON object';
      this.out.push({ type: 'warning', message: `a tool call of ${name} was kept in the content: ${why}` });
      this.content.write(body);
      return;
    }
    emitCall(this.out, this.calls++, { name, arguments: args, argumentsText: text === '' ? '{}' : text });
  }
}
