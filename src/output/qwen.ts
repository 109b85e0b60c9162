/**
 * Qwen3 (`qwen3`, hermes-style JSON) and Qwen3-Coder / Qwen3.5 (`qwen3-coder`, XML) tool calls.
 *
 * qwen3: `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>`, the body one JSON
 * object with a string `name` and an object `arguments` (vLLM vllm/tool_parsers/hermes_tool_parser.py;
 * llama.cpp common/chat.cpp, the Hermes 2 Pro handler). `arguments` given as a JSON string is
 * read too; anything else is not a call.
 *
 * qwen3-coder: `<tool_call>\n<function=f>\n<parameter=k>\nv\n</parameter>\n</function>\n</tool_call>`
 * (vLLM vllm/tool_parsers/qwen3coder_tool_parser.py): one or more `<function=...>` blocks;
 * a value loses one leading and one trailing newline and is typed by the tool's schema
 * (./schema.ts). vLLM also accepts a missing `</parameter>` (the next `<parameter=` or
 * `</function>` ends the value) and a missing `</function>`; so do we, with a warning.
 */
import { parseJsonObject, pythonDumps, toolParameters, typedValue } from './schema.js';
import type { RegionFormatSpec } from './stream.js';
import type { CallBody, RegionResult } from './types.js';

const QWEN_STOPS = ['<|im_end|>', '<|endoftext|>', '<|im_start|>'];

export function parseHermesCall(body: string): RegionResult {
  const text = body.trim();
  const obj = parseJsonObject(text);
  if (!obj) return { error: `the body is not one JSON object: ${JSON.stringify(text.slice(0, 60))}` };
  if (typeof obj.name !== 'string' || obj.name === '') return { error: 'the JSON object has no string "name"' };
  let args = obj.arguments ?? {};
  let argumentsText: string | undefined;
  if (typeof args === 'string') {
    argumentsText = args;
    args = parseJsonObject(args) ?? args;
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return { error: `"arguments" of ${obj.name} is not an object` };
  // The arguments' own JSON text, as the model wrote it: the object's text inside the body.
  argumentsText ??= jsonMemberText(text, 'arguments') ?? JSON.stringify(args);
  return { calls: [{ name: obj.name, arguments: args as Record<string, unknown>, argumentsText }], warnings: [] };
}

/**
 * The source text of the top-level member `key` of the JSON object `text` (already known to
 * parse), so that the arguments keep the model's spacing; undefined when not found.
 */
export function jsonMemberText(text: string, key: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth !== 1) continue;
      let j = i + 1;
      while (/\s/.test(text[j] ?? '')) j++;
      if (text[j] !== ':') continue;
      if (JSON.parse(text.slice(start, i + 1)) !== key) continue;
      j++;
      while (/\s/.test(text[j] ?? '')) j++;
      const end = valueEnd(text, j);
      return text.slice(j, end);
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return undefined;
}

/** The end of the JSON value that starts at `i` (text is valid JSON around it). */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (let k = i; k < text.length; k++) {
    const c = text[k];
    if (c === '"') {
      for (k++; k < text.length && text[k] !== '"'; k++) if (text[k] === '\\') k++;
      if (depth === 0) return k + 1;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return k + 1;
    } else if (depth === 0 && (c === ',' || /\s/.test(c!))) return k;
  }
  return text.length;
}

const FN_OPEN = '<function=';
const FN_CLOSE = '</function>';
const PARAM_OPEN = '<parameter=';
const PARAM_CLOSE = '</parameter>';

export function parseCoderCalls(body: string, tools: readonly unknown[] | undefined): RegionResult {
  const calls: CallBody[] = [];
  const warnings: string[] = [];
  let at = 0;
  for (;;) {
    const f = body.indexOf(FN_OPEN, at);
    const gap = body.slice(at, f < 0 ? body.length : f);
    if (gap.trim() !== '') return { error: `unexpected text outside ${FN_OPEN}...${FN_CLOSE}: ${JSON.stringify(gap.trim().slice(0, 40))}` };
    if (f < 0) break;
    const nameEnd = body.indexOf('>', f);
    if (nameEnd < 0) return { error: `${FN_OPEN} without its closing >` };
    const name = body.slice(f + FN_OPEN.length, nameEnd).trim();
    if (name === '' || /[<\s]/.test(name)) return { error: `bad function name ${JSON.stringify(name.slice(0, 40))}` };
    let end = body.indexOf(FN_CLOSE, nameEnd);
    const next = body.indexOf(FN_OPEN, nameEnd);
    let close = FN_CLOSE.length;
    if (end < 0 || (next >= 0 && next < end)) {
      warnings.push(`tool ${name}: ${FN_CLOSE} missing`);
      end = next >= 0 ? next : body.length;
      close = 0;
    }
    const r = coderParams(body.slice(nameEnd + 1, end), name, toolParameters(tools, name), warnings);
    if ('error' in r) return r;
    calls.push({ name, arguments: r.args, argumentsText: pythonDumps(r.args) });
    at = end + close;
  }
  if (calls.length === 0) return { error: `no ${FN_OPEN}` };
  return { calls, warnings };
}

function coderParams(
  text: string,
  tool: string,
  params: Record<string, unknown> | undefined,
  warnings: string[],
): { args: Record<string, unknown> } | { error: string } {
  const args: Record<string, unknown> = {};
  let at = 0;
  for (;;) {
    const p = text.indexOf(PARAM_OPEN, at);
    const gap = text.slice(at, p < 0 ? text.length : p);
    if (gap.trim() !== '') return { error: `tool ${tool}: unexpected text outside ${PARAM_OPEN}...${PARAM_CLOSE}: ${JSON.stringify(gap.trim().slice(0, 40))}` };
    if (p < 0) break;
    const keyEnd = text.indexOf('>', p);
    if (keyEnd < 0) return { error: `tool ${tool}: ${PARAM_OPEN} without its closing >` };
    const key = text.slice(p + PARAM_OPEN.length, keyEnd).trim();
    let end = text.indexOf(PARAM_CLOSE, keyEnd);
    const next = text.indexOf(PARAM_OPEN, keyEnd);
    let close = PARAM_CLOSE.length;
    if (end < 0 || (next >= 0 && next < end)) {
      warnings.push(`tool ${tool}: ${PARAM_CLOSE} missing after ${JSON.stringify(key)}`);
      end = next >= 0 ? next : text.length;
      close = 0;
    }
    let value = text.slice(keyEnd + 1, end);
    if (value.startsWith('\n')) value = value.slice(1);
    if (value.endsWith('\n')) value = value.slice(0, -1);
    if (Object.hasOwn(args, key)) warnings.push(`tool ${tool}: argument ${JSON.stringify(key)} given twice; the last value is kept`);
    args[key] = typedValue(value, params, key, (m) => warnings.push(m), tool);
    at = end + close;
  }
  return { args };
}

export function hermesSpec(): RegionFormatSpec {
  return { thinking: true, defaultStart: 'auto', regionStart: '<tool_call>', regionEnd: '</tool_call>', stops: QWEN_STOPS, parseRegion: parseHermesCall };
}

export function coderSpec(tools: readonly unknown[] | undefined): RegionFormatSpec {
  return {
    thinking: true,
    // Qwen3-Coder does not think; Qwen3.5 (same call format) opens <think> in the prompt, which
    // tok.parseOutput detects, and a <think> at the very start still opens reasoning.
    defaultStart: 'content',
    regionStart: '<tool_call>',
    regionEnd: '</tool_call>',
    stops: QWEN_STOPS,
    parseRegion: (body) => parseCoderCalls(body, tools),
  };
}
