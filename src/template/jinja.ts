import { createRequire } from 'node:module';
import type * as Jinja from '@huggingface/jinja';

let loaded: typeof Jinja | undefined;

/**
 * @huggingface/jinja, loaded on first use (its CommonJS build, so callers stay
 * synchronous). Importing it costs ~10 ms, which a load that never renders a chat
 * template no longer pays. Every promptenc module takes jinja from here, so all
 * runtime values come from one copy of the library.
 */
export function jinja(): typeof Jinja {
  return (loaded ??= createRequire(import.meta.url)('@huggingface/jinja') as typeof Jinja);
}
