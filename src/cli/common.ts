import { readFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import { PromptencError, describeValue } from '../errors.js';
import { loadTokenizer, type PromptTokenizer } from '../tokenizer.js';
import type { BackendChoice } from '../backend/types.js';

/** A usage error: exit 2 and print the command's usage. */
export class UsageError extends Error {}

export interface ModelFlags {
  model?: string;
  tokenizer?: string;
  backend?: BackendChoice;
  /** the tiktoken encoding of a .tiktoken rank file given as --tokenizer */
  encoding?: string;
}

export function addModelOptions(cmd: Command): Command {
  return cmd
    .option('--model <name>', 'a bundled model (deepseek-v3, qwen3, llama3, gpt-4o, gpt-oss) or a model directory')
    .option('--tokenizer <path>', 'a tokenizer.json file or a Hugging Face model directory')
    .option('--encoding <name>', 'with --tokenizer FILE.tiktoken: its tiktoken encoding (o200k_base, cl100k_base, p50k_base, p50k_edit, r50k_base)')
    .addOption(new Option('--backend <kind>', 'encoder backend').choices(['auto', 'native', 'js']).default('auto'));
}

/** The one model source the flags name (a bundled name or a path). */
export function sourceFromFlags(flags: ModelFlags): string {
  if (flags.model && flags.tokenizer) throw new UsageError('use either --model or --tokenizer, not both');
  const source = flags.model ?? flags.tokenizer;
  if (!source) throw new UsageError('one of --model NAME or --tokenizer PATH is required');
  return source;
}

export async function loadFromFlags(flags: ModelFlags): Promise<PromptTokenizer> {
  return loadTokenizer(sourceFromFlags(flags), { backend: flags.backend ?? 'auto', ...(flags.encoding !== undefined && { encoding: flags.encoding }) });
}

export async function readTextFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new PromptencError('E_IO', `${what}: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** A JSON file, or stdin for "-"; a UTF-8 BOM (Windows editors write one) is skipped, as Python's utf-8-sig does. */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  let text = path === '-' ? await readStdin() : await readTextFile(path, what);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new PromptencError('E_MESSAGES_INVALID', `${what}: ${path === '-' ? 'stdin' : path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}

export function parseJsonFlag(value: string, flag: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new UsageError(`${flag}: expected a JSON object, could not parse: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${flag}: expected a JSON object, received ${describeValue(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function writeOut(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
