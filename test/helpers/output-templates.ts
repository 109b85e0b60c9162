/** The real chat templates in ../shared/templates (read at test time, never committed), found through shared-files.ts. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sharedPath } from './shared-files.js';

const probe = sharedPath('templates/glm-4.5.jinja', 'output tests: the real-template cases');
export const TEMPLATES_DIR = probe !== undefined ? path.dirname(probe) : undefined;
export const templatesAvailable = TEMPLATES_DIR !== undefined;

export function sharedTemplate(file: string): string {
  return readFileSync(path.join(TEMPLATES_DIR!, file), 'utf8');
}
