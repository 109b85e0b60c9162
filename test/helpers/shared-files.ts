/**
 * Where ../shared (the data files that sit beside the project: real GLM-4 tokenizer files,
 * real chat templates, the seed documents) is on this machine, if anywhere: the env var
 * PROMPTENC_SHARED_DIR, else `../shared` next to the checkout, else next to its parent (a
 * git worktree one level down). Tests that need it skip with a visible message when absent.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const SHARED_DIR: string | undefined = [process.env.PROMPTENC_SHARED_DIR, path.join(root, '..', 'shared'), path.join(root, '..', '..', 'shared')].find(
  (p): p is string => !!p && existsSync(path.join(p, 'models')),
);

/** A path under SHARED_DIR that exists, or undefined (and one warning line naming what is missing). */
export function sharedPath(rel: string, why: string): string | undefined {
  const p = SHARED_DIR ? path.join(SHARED_DIR, rel) : undefined;
  if (p && existsSync(p)) return p;
  console.warn(`SKIP ${why}: ../shared/${rel} is not on this machine (set PROMPTENC_SHARED_DIR to the folder that holds models/, templates/, seeds/)`);
  return undefined;
}
