import { it } from 'vitest';
import { loadTokenizer } from '../src/index.js';
import { checkEveryPrefix } from './helpers/every-prefix.js';

it('Qwen3 template and tokenizer: session.encodeChat equals encodeChat on every prefix of a 200-turn conversation', async () => {
  checkEveryPrefix(await loadTokenizer('qwen3'));
});
