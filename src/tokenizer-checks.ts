/**
 * Size limits on tokenizer files and on encode input, checked before anything is built or
 * allocated, so that a hostile file or prompt fails fast with a code instead of hanging the
 * loader or exhausting memory. Bottom layer: imports nothing but the error type.
 *
 * Why these numbers (docs/reliability.md has the table):
 * - MAX_TOKEN_ID: both backends keep tables indexed by id (the native core's raw bytes and
 *   decode table, the JS library's id → token array), so memory follows the largest id, not
 *   the number of tokens: one vocabulary id of 1e9 took > 120 s and 4.7 GB before this check.
 *   The Rust oracle (tokenizers 0.23.2) stores ids in hash maps and accepts any u32 (checked:
 *   ids 1e9 and 2^32 - 1 load, 2^32 is refused by serde); promptenc refuses ids above
 *   2^22 - 1 = 4,194,303, 16 times the largest vocabulary shipped today (Gemma 3: 262,144
 *   + 6,415 added). This is a documented departure: such a file loads in the oracle.
 * - MAX_TOKENIZER_FILE_BYTES: 128 MiB, ~4x the largest real tokenizer.json seen (Gemma 3,
 *   ~33 MB). Checked from the file's size before it is read.
 * - DEFAULT_MAX_INPUT_BYTES: 64 MiB of UTF-8 per encode call (LoadOptions.maxInputBytes
 *   changes it): an encode holds a few times its input in scratch space.
 */
import { PromptencError, describeValue } from './errors.js';

/** The largest token id either backend accepts in model.vocab or added_tokens. */
export const MAX_TOKEN_ID = 2 ** 22 - 1;

/** The largest tokenizer.json / tokenizer_config.json read, in bytes. */
export const MAX_TOKENIZER_FILE_BYTES = 128 * 1024 * 1024;

/** LoadOptions.maxInputBytes when it is not given: the largest encode input, in UTF-8 bytes. */
export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** The largest value LoadOptions.maxInputBytes may take (2^31 - 1: a V8 string is shorter). */
export const MAX_INPUT_BYTES_LIMIT = 2 ** 31 - 1;

/** Whether `id` is an integer token id within MAX_TOKEN_ID. */
export function isBoundedTokenId(id: unknown): id is number {
  return typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= MAX_TOKEN_ID;
}

/**
 * The E_TOKENIZER_INVALID error for an id at `where` (a JSON path such as
 * `model.vocab["hello"]` or `added_tokens[3].id`) that is no id or above MAX_TOKEN_ID.
 */
export function badTokenId(where: string, id: unknown, file = 'tokenizer.json'): PromptencError {
  const integer = typeof id === 'number' && Number.isInteger(id) && id >= 0;
  const detail = integer
    ? `expected a non-negative integer id at most ${MAX_TOKEN_ID} (promptenc's MAX_TOKEN_ID; see docs/reliability.md), received ${id}`
    : `expected a non-negative integer id, received ${describeValue(id)}`;
  return new PromptencError('E_TOKENIZER_INVALID', `${file} ${where}: ${detail}`);
}

/** Throws badTokenId unless `id` is a bounded token id. */
export function checkTokenId(where: string, id: unknown, file?: string): asserts id is number {
  if (!isBoundedTokenId(id)) throw badTokenId(where, id, file);
}

/** The largest value of `ids`, or -1 when empty (one pass; the scanner's Uint32Array of ids). */
export function maxOf(ids: ArrayLike<number>): number {
  let max = -1;
  for (let i = 0; i < ids.length; i++) if (ids[i]! > max) max = ids[i]!;
  return max;
}

/** Refuses a file larger than MAX_TOKENIZER_FILE_BYTES before it is read. */
export function checkTokenizerFileSize(file: string, what: string, size: number): void {
  if (size > MAX_TOKENIZER_FILE_BYTES) {
    throw new PromptencError(
      'E_TOKENIZER_INVALID',
      `${what} at ${file} is ${size} bytes, above promptenc's limit of ${MAX_TOKENIZER_FILE_BYTES} (MAX_TOKENIZER_FILE_BYTES; see docs/reliability.md)`,
    );
  }
}

/** LoadOptions.maxInputBytes: an integer from 1 to MAX_INPUT_BYTES_LIMIT, default DEFAULT_MAX_INPUT_BYTES. */
export function checkMaxInputBytesOption(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_INPUT_BYTES;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_INPUT_BYTES_LIMIT) {
    throw new PromptencError('E_ARGUMENT', `options.maxInputBytes: expected an integer from 1 to ${MAX_INPUT_BYTES_LIMIT}, received ${describeValue(value)}`);
  }
  return value;
}

/**
 * Refuses `text` when its UTF-8 form is longer than `max` bytes, before it is encoded. A
 * UTF-16 unit is 1 to 3 UTF-8 bytes, so the exact count (Buffer.byteLength, one pass with no
 * allocation) is only taken when the length alone cannot decide.
 */
export function checkInputSize(text: string, max: number, name = 'text'): void {
  const units = text.length;
  if (units <= max / 3) return;
  const bytes = units > max ? units : Buffer.byteLength(text, 'utf8');
  if (bytes > max) {
    throw new PromptencError(
      'E_INPUT_TOO_LARGE',
      `${name}: ${units > max ? `at least ${bytes}` : bytes} UTF-8 bytes, above options.maxInputBytes = ${max} (set it when loading the tokenizer)`,
    );
  }
}
