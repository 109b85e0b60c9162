import { afterAll, it } from 'vitest';
import { loadTokenizer } from '../src/index.js';
import { buildGlmTokenizerDir, removeGlmTokenizerDir } from '../bench/helpers/glm-tokenizer.mjs';
import { checkEveryPrefix } from './helpers/every-prefix.js';

afterAll(() => removeGlmTokenizerDir());

it('GLM-format fixture: session.encodeChat equals encodeChat on every prefix of a 200-turn conversation', async () => {
  checkEveryPrefix(await loadTokenizer(buildGlmTokenizerDir()));
});
