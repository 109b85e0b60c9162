/** The real chat templates in ../shared/templates (read at test time, never committed). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const TEMPLATES_DIR = '/work/shared/templates';
export const templatesAvailable = existsSync(path.join(TEMPLATES_DIR, 'glm-4.5.jinja'));
if (!templatesAvailable) console.warn(`output tests: ${TEMPLATES_DIR} not found; template cases skipped`);

export function sharedTemplate(file: string): string {
  return readFileSync(path.join(TEMPLATES_DIR, file), 'utf8');
}
