/**
 * Typing string-valued arguments by the tool's JSON schema (glm, qwen3-coder).
 *
 * Those formats write every argument value as text. The rule, from vLLM's qwen3coder_tool_parser
 * `_convert_param_value` (and, for GLM, the issue's rule rather than glm4_moe_tool_parser's, which
 * JSON-decodes every value whose schema type is not "string", even with no schema at all):
 * - no tools, no such tool, no such property, or no `type` in its schema: the string as written;
 * - a type list or anyOf/oneOf that allows "string": the string;
 * - integer: a decimal integer literal becomes a number; number: a JSON number literal;
 *   boolean: true/false (any case); null: `null` (any case);
 *   object/array: JSON text of that kind (vLLM also tries Python's ast.literal_eval; we do not);
 * - a value that does not read as its schema's type stays a string, and a warning says so.
 */
import { pythonFloatRepr, pythonJsonString } from '../template/pyjson.js';

type Schema = Record<string, unknown>;
const isObj = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The `parameters` schema of the tool named `name` in an OpenAI tools list (or bare function objects). */
export function toolParameters(tools: readonly unknown[] | undefined, name: string): Schema | undefined {
  if (!tools) return undefined;
  for (const t of tools) {
    if (!isObj(t)) continue;
    const fn = isObj(t.function) ? t.function : t;
    if (fn.name === name) return isObj(fn.parameters) ? fn.parameters : undefined;
  }
  return undefined;
}

/** The JSON types a property schema allows, or undefined when it says nothing. */
function allowedTypes(prop: unknown): Set<string> | undefined {
  if (!isObj(prop)) return undefined;
  const out = new Set<string>();
  const add = (s: unknown) => {
    if (typeof s === 'string') out.add(s.trim().toLowerCase());
    else if (Array.isArray(s)) for (const x of s) if (typeof x === 'string') out.add(x.trim().toLowerCase());
  };
  add(prop.type);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = prop[key];
    if (Array.isArray(list)) for (const sub of list) if (isObj(sub)) add(sub.type);
  }
  if (out.size === 0 && Array.isArray(prop.enum)) return new Set(['string']);
  return out.size > 0 ? out : undefined;
}

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** The value of `raw` for property `key` of `parameters`; `warn` gets a note when a typed value does not read. */
export function typedValue(raw: string, parameters: Schema | undefined, key: string, warn: (message: string) => void, tool: string): unknown {
  const props = parameters && isObj(parameters.properties) ? parameters.properties : undefined;
  const types = allowedTypes(props?.[key]);
  if (!types || types.has('string')) return raw;
  const text = raw.trim();
  if (types.has('null') && text.toLowerCase() === 'null') return null;
  if (types.has('integer') && INTEGER.test(text)) return Number(text);
  if (types.has('number') && NUMBER.test(text)) return Number(text);
  if (types.has('boolean') && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  if (types.has('object') || types.has('array')) {
    try {
      const v: unknown = JSON.parse(text);
      if ((types.has('array') && Array.isArray(v)) || (types.has('object') && isObj(v))) return v;
    } catch {
      // falls through to the warning
    }
  }
  warn(`tool ${tool}: argument ${JSON.stringify(key)} is not a ${[...types].join(' or ')} as its schema says; kept as a string`);
  return raw;
}

/** Python's json.dumps(v, ensure_ascii=False): what vLLM returns as function.arguments. */
export function pythonDumps(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return pythonJsonString(v, false);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e16 ? String(v) : pythonFloatRepr(v);
  if (Array.isArray(v)) return `[${v.map(pythonDumps).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Schema)
      .map(([k, x]) => `${pythonJsonString(k, false)}: ${pythonDumps(x)}`)
      .join(', ')}}`;
  }
  return pythonJsonString(String(v), false);
}

/** JSON text that must be an object (the arguments of a JSON-format call). */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
