import { PromptencError } from './errors.js';
import type { TokenizerJson } from './tokenizer-json.js';

/**
 * The special tokens `tokenizer(text)` adds around one sequence, as IDs before and after.
 * transformers semantics: when tokenizer_config.json sets add_bos_token / add_eos_token
 * (LlamaTokenizerFast and kin rebuild their post-processor from them), those flags decide;
 * otherwise the tokenizer.json post_processor does. DeepSeek-V3 is the case that differs:
 * its post_processor adds nothing, but add_bos_token is true, so BOS 0 is prepended.
 */
export interface SequenceWrap {
  prefix: number[];
  suffix: number[];
}

/** The wrap of addSpecialTokens: false, and of every chat encode. */
export const NO_WRAP: SequenceWrap = { prefix: [], suffix: [] };

/** prefix ++ body ++ suffix as a new array (body is copied once, even when it is a view). */
export function framed(wrap: SequenceWrap, body: Uint32Array): Uint32Array {
  const out = new Uint32Array(wrap.prefix.length + body.length + wrap.suffix.length);
  out.set(wrap.prefix, 0);
  out.set(body, wrap.prefix.length);
  out.set(wrap.suffix, wrap.prefix.length + body.length);
  return out;
}

type Json = Record<string, unknown>;

function tokenContent(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Json).content === 'string') return (v as Json).content as string;
  return undefined;
}

function fromPostProcessor(pp: unknown, where: string): SequenceWrap {
  const none: SequenceWrap = { prefix: [], suffix: [] };
  if (!pp || typeof pp !== 'object') return none;
  const p = pp as Json;
  switch (p.type) {
    case 'ByteLevel':
      return none;
    case 'Sequence': {
      const out: SequenceWrap = { prefix: [], suffix: [] };
      for (const inner of (p.processors as unknown[]) ?? []) {
        const w = fromPostProcessor(inner, where);
        out.prefix = [...w.prefix, ...out.prefix];
        out.suffix = [...out.suffix, ...w.suffix];
      }
      return out;
    }
    case 'TemplateProcessing': {
      const specials = (p.special_tokens ?? {}) as Record<string, { ids?: number[] }>;
      const out: SequenceWrap = { prefix: [], suffix: [] };
      let seenSequence = false;
      for (const piece of (p.single as Json[]) ?? []) {
        if (piece.Sequence) {
          seenSequence = true;
          continue;
        }
        const sp = piece.SpecialToken as { id: string } | undefined;
        if (!sp) continue;
        const ids = specials[sp.id]?.ids;
        if (!ids) throw new PromptencError('E_TOKENIZER_INVALID', `${where}: post_processor special token ${JSON.stringify(sp.id)} has no ids`);
        (seenSequence ? out.suffix : out.prefix).push(...ids);
      }
      return out;
    }
    case 'BertProcessing':
    case 'RobertaProcessing': {
      const cls = p.cls as [string, number];
      const sep = p.sep as [string, number];
      return { prefix: [cls[1]], suffix: [sep[1]] };
    }
    default:
      throw new PromptencError('E_TOKENIZER_INVALID', `${where}: post_processor type ${JSON.stringify(p.type)} is not supported`);
  }
}

export function sequenceWrap(json: TokenizerJson, config: Json, tokenToId: (t: string) => number | undefined, where: string): SequenceWrap {
  const hasBos = typeof config.add_bos_token === 'boolean';
  const hasEos = typeof config.add_eos_token === 'boolean';
  if (!hasBos && !hasEos) return fromPostProcessor(json.post_processor, where);
  const special = (flag: unknown, key: 'bos_token' | 'eos_token'): number[] => {
    if (flag !== true) return [];
    const content = tokenContent(config[key]);
    if (content === undefined) return [];
    const id = tokenToId(content);
    if (id === undefined) {
      throw new PromptencError('E_TOKENIZER_INVALID', `${where}: ${key} ${JSON.stringify(content)} is not in the vocabulary`);
    }
    return [id];
  };
  return { prefix: special(config.add_bos_token, 'bos_token'), suffix: special(config.add_eos_token, 'eos_token') };
}

/**
 * The special-token strings a chat template sees: transformers' special_tokens_map,
 * which leaves out unset (None) tokens, so `{{ bos_token }}` renders '' for Qwen.
 */
export function specialTokenStrings(config: Json): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token']) {
    const content = tokenContent(config[key]);
    if (content !== undefined) out[key] = content;
  }
  if (Array.isArray(config.additional_special_tokens)) {
    out.additional_special_tokens = (config.additional_special_tokens as unknown[]).map(tokenContent).filter((x): x is string => x !== undefined);
  }
  return out;
}
