/**
 * GLM-4.5/4.6 (`glm45`) and GLM-4.7/5.x (`glm47`) tool calls:
 *   <tool_call>name\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n...</tool_call>   (glm45)
 *   <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>           (glm47)
 * The two differ in the newlines the templates write; both parse either form. Rules from vLLM
 * vllm/tool_parsers/glm4_moe_tool_parser.py and glm47_moe_tool_parser.py: the name is the text
 * before the first <arg_key>, keys and values are stripped of surrounding whitespace, and only
 * whitespace (or a literal `\n`, which glm47's regex allows) may separate the pairs. Values are
 * strings, typed by the tool's schema (./schema.ts). A region with anything else in it is not a
 * call (it stays in the content, with a warning).
 */
import { pythonDumps, toolParameters, typedValue } from './schema.js';
import type { RegionFormatSpec } from './stream.js';
import type { RegionResult } from './types.js';

const KEY_OPEN = '<arg_key>';
const KEY_CLOSE = '</arg_key>';
const VALUE_OPEN = '<arg_value>';
const VALUE_CLOSE = '</arg_value>';

/** Whitespace, or the two characters `\n` (glm47's `(?:\\n|\s)*`). */
const SEPARATOR = /^(?:\s|\\n)*$/;

export function parseGlmCall(body: string, tools: readonly unknown[] | undefined): RegionResult {
  const first = body.indexOf(KEY_OPEN);
  const name = (first < 0 ? body : body.slice(0, first)).trim();
  if (name === '' || /[<>\s]/.test(name)) return { error: `no function name before ${KEY_OPEN} (found ${JSON.stringify(name.slice(0, 40))})` };
  const params = toolParameters(tools, name);
  const warnings: string[] = [];
  const args: Record<string, unknown> = {};
  let at = first < 0 ? body.length : first;
  while (at < body.length) {
    const k = body.indexOf(KEY_OPEN, at);
    if (k < 0) {
      if (!SEPARATOR.test(body.slice(at))) return { error: `unexpected text after the last </arg_value>: ${JSON.stringify(body.slice(at, at + 40))}` };
      break;
    }
    if (!SEPARATOR.test(body.slice(at, k))) return { error: `unexpected text between arguments: ${JSON.stringify(body.slice(at, k).slice(0, 40))}` };
    const kEnd = body.indexOf(KEY_CLOSE, k);
    if (kEnd < 0) return { error: `${KEY_OPEN} without ${KEY_CLOSE}` };
    const key = body.slice(k + KEY_OPEN.length, kEnd).trim();
    if (key === '' || key.includes('<')) return { error: `bad argument name ${JSON.stringify(key.slice(0, 40))}` };
    const v = body.indexOf(VALUE_OPEN, kEnd);
    if (v < 0 || !SEPARATOR.test(body.slice(kEnd + KEY_CLOSE.length, v))) return { error: `argument ${JSON.stringify(key)} has no ${VALUE_OPEN}` };
    const vEnd = body.indexOf(VALUE_CLOSE, v);
    if (vEnd < 0) return { error: `${VALUE_OPEN} without ${VALUE_CLOSE}` };
    const inner = body.slice(v + VALUE_OPEN.length, vEnd);
    if (inner.includes(KEY_OPEN) || inner.includes(VALUE_OPEN))
      return { error: `argument ${JSON.stringify(key)}: ${VALUE_OPEN} not closed before the next tag` };
    if (Object.hasOwn(args, key)) warnings.push(`tool ${name}: argument ${JSON.stringify(key)} given twice; the last value is kept`);
    args[key] = typedValue(inner.trim(), params, key, (m) => warnings.push(m), name);
    at = vEnd + VALUE_CLOSE.length;
  }
  return { calls: [{ name, arguments: args, argumentsText: pythonDumps(args) }], warnings };
}

export function glmSpec(tools: readonly unknown[] | undefined): RegionFormatSpec {
  return {
    thinking: true,
    defaultStart: 'auto',
    regionStart: '<tool_call>',
    regionEnd: '</tool_call>',
    // GLM's chat template ends a turn at the next role token; <|endoftext|> is its eos.
    stops: ['<|user|>', '<|observation|>', '<|endoftext|>', '<|system|>'],
    parseRegion: (body) => parseGlmCall(body, tools),
  };
}
