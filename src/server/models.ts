import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PromptencError, describeValue } from '../errors.js';
import { BUNDLED_MODELS } from '../load.js';
import { loadTokenizer, type PromptTokenizer } from '../tokenizer.js';
import type { BackendChoice } from '../backend/types.js';
import { tokenStrings, type TokenStrings } from './token-strings.js';

/** What `--model` / `--tokenizer` asked for; plain data, so that worker threads can load the same models. */
export interface ModelSpec {
  /** The id clients send as "model" and GET /v1/models lists. */
  id: string;
  /** A bundled name, a model directory or a tokenizer.json path. */
  source: string;
  backend: BackendChoice;
  /** `--encoding NAME`: the tiktoken encoding of a `.tiktoken` rank file (LoadOptions.encoding). */
  encoding?: string;
  /** `--template FILE`: replaces the model's chat template (a request's chat_template still wins). */
  chatTemplate?: string;
}

export interface ServedModel {
  readonly spec: ModelSpec;
  readonly tok: PromptTokenizer;
  /**
   * The context length from config.json (max_position_embeddings) or tokenizer_config.json
   * (model_max_length below 2^31; transformers writes 1e30 when unknown), else null.
   */
  readonly maxModelLen: number | null;
  /** id → token string and bytes, built on first use (it parses tokenizer.json's vocab once). */
  tokenStrings(): Promise<TokenStrings>;
}

/** The served id of a source: a bundled name as is, a path by its directory name. */
export function modelIdOf(source: string): string {
  if (source in BUNDLED_MODELS) return source;
  const base = path.basename(source);
  return base.endsWith('.json') ? path.basename(path.dirname(path.resolve(source))) : base;
}

async function readJsonIfPresent(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function saneLength(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 2 ** 31 ? v : null;
}

async function maxModelLenOf(tokenizerPath: string): Promise<number | null> {
  const dir = path.dirname(tokenizerPath);
  const config = await readJsonIfPresent(path.join(dir, 'config.json'));
  const fromConfig = saneLength(config?.max_position_embeddings);
  if (fromConfig !== null) return fromConfig;
  const tokConfig = await readJsonIfPresent(path.join(dir, 'tokenizer_config.json'));
  return saneLength(tokConfig?.model_max_length);
}

export async function loadServedModel(spec: ModelSpec): Promise<ServedModel> {
  const tok = await loadTokenizer(spec.source, { backend: spec.backend, ...(spec.encoding !== undefined && { encoding: spec.encoding }) });
  const maxModelLen = await maxModelLenOf(tok.tokenizerPath);
  let strings: Promise<TokenStrings> | undefined;
  return { spec, tok, maxModelLen, tokenStrings: () => (strings ??= tokenStrings(tok.tokenizerPath)) };
}

/** The served models; the first is the default of a request without "model". */
export class ModelRegistry {
  private readonly byName = new Map<string, ServedModel>();

  constructor(readonly models: readonly ServedModel[]) {
    if (models.length === 0) throw new PromptencError('E_ARGUMENT', 'at least one model is needed: pass --model NAME or --tokenizer PATH');
    for (const m of models) {
      if (this.byName.has(m.spec.id))
        throw new PromptencError('E_ARGUMENT', `two models are served as "${m.spec.id}"; each --model / --tokenizer needs a distinct directory name`);
      this.byName.set(m.spec.id, m);
    }
    // The source string (a path as given) is an alias, as vLLM serves a model under the path it was given.
    for (const m of models) if (!this.byName.has(m.spec.source)) this.byName.set(m.spec.source, m);
  }

  static async load(specs: readonly ModelSpec[]): Promise<ModelRegistry> {
    const models: ServedModel[] = [];
    for (const s of specs) models.push(await loadServedModel(s));
    return new ModelRegistry(models);
  }

  get default(): ServedModel {
    return this.models[0]!;
  }

  /** The model a request names, or the default; unknown names are a 404, as vLLM answers them. */
  resolve(name: unknown): ServedModel {
    if (name === undefined || name === null) return this.default;
    if (typeof name !== 'string') throw new PromptencError('E_REQUEST_INVALID', `model: expected a string, received ${describeValue(name)}`);
    const m = this.byName.get(name);
    if (!m) {
      const known = this.models.map((x) => x.spec.id).join(', ');
      throw new PromptencError('E_MODEL_NOT_FOUND', `The model \`${name}\` does not exist. Served models: ${known}`);
    }
    return m;
  }
}
