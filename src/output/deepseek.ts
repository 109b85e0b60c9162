/**
 * DeepSeek tool calls (`deepseek-v3`, `deepseek-v3.1`, `deepseek-r1`), all inside one region
 * `<｜tool▁calls▁begin｜>` ... `<｜tool▁calls▁end｜>` of one or more calls:
 *   V3 / R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json\n{...}\n```<｜tool▁call▁end｜>
 *   V3.1:    <｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
 * (vLLM vllm/tool_parsers/deepseekv3_tool_parser.py and deepseekv31_tool_parser.py; llama.cpp
 * common/chat.cpp, the DeepSeek R1 and V3.1 handlers.) Either call form is read in every
 * DeepSeek format: the form is told by what follows the separator (a name line and a ```json
 * fence, or JSON). Calls may be separated by whitespace (R1's template writes a newline).
 */
import { parseJsonObject } from './schema.js';
import type { RegionFormatSpec } from './stream.js';
import type { CallBody, RegionResult } from './types.js';

const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';
const FENCED = /^([^\n]*)\n```(?:json)?\n([\s\S]*)\n```\s*$/;

export function parseDeepSeekCalls(body: string): RegionResult {
  const calls: CallBody[] = [];
  let at = 0;
  for (;;) {
    const b = body.indexOf(CALL_BEGIN, at);
    const gap = body.slice(at, b < 0 ? body.length : b);
    if (gap.trim() !== '') return { error: `unexpected text between calls: ${JSON.stringify(gap.trim().slice(0, 40))}` };
    if (b < 0) break;
    const e = body.indexOf(CALL_END, b);
    if (e < 0) return { error: `${CALL_BEGIN} without ${CALL_END}` };
    const call = body.slice(b + CALL_BEGIN.length, e);
    const s = call.indexOf(SEP);
    if (s < 0) return { error: `a call without ${SEP}` };
    const left = call.slice(0, s).trim();
    const right = call.slice(s + SEP.length);
    const fenced = FENCED.exec(right);
    // V3: "function" before the separator, then the name line and a fence; V3.1: the name, then JSON.
    const name = fenced ? fenced[1]!.trim() : left;
    const argumentsText = (fenced ? fenced[2]! : right).trim();
    if (name === '' || /[<\s]/.test(name)) return { error: `bad function name ${JSON.stringify(name.slice(0, 40))}` };
    const args = argumentsText === '' ? {} : parseJsonObject(argumentsText);
    if (!args) return { error: `the arguments of ${name} are not a JSON object: ${JSON.stringify(argumentsText.slice(0, 60))}` };
    calls.push({ name, arguments: args, argumentsText: argumentsText === '' ? '{}' : argumentsText });
    at = e + CALL_END.length;
  }
  if (calls.length === 0) return { error: `no ${CALL_BEGIN}` };
  return { calls, warnings: [] };
}

export function deepSeekSpec(format: 'deepseek-v3' | 'deepseek-v3.1' | 'deepseek-r1'): RegionFormatSpec {
  return {
    thinking: true,
    // R1 thinks by default (its output may start inside reasoning without a <think>, which vLLM's
    // deepseek_r1 reasoning parser allows for); V3 does not; V3.1 thinks only when the prompt
    // opened <think> (its template's thinking flag), which tok.parseOutput detects.
    defaultStart: format === 'deepseek-r1' ? 'auto' : 'content',
    regionStart: '<｜tool▁calls▁begin｜>',
    regionEnd: '<｜tool▁calls▁end｜>',
    stops: ['<｜end▁of▁sentence｜>', '<｜User｜>', '<｜Assistant｜>'],
    parseRegion: parseDeepSeekCalls,
  };
}
