// Question (issue 15): what does rendering a chat template cost in our own engine
// (src/template/engine) against @huggingface/jinja (a dev-only reference peer) and Python Jinja2
// as transformers configures it (test/helpers/jinja2_oracle.py, timed inside Python, for scale),
// on the same template and data in one run with no V8 flag: full renders of the 200k-token
// DeepSeek-V3 and GLM-format histories, and a warm 3-message Qwen3 render. Prints ratios and
// whether the texts agree. The measurement lives in render-engines.mjs and runs in a fresh child
// process.
//   node bench/render.mjs [--only engines]     child mode: --child engines
import { jsonOutPath, machine, writeJson } from './_common.mjs';

if (process.argv[2] === '--child' && process.argv[3] === 'engines') {
  await (await import('./render-engines.mjs')).childMain();
  process.exit(0);
}

// `--only engines` is accepted for older scripts: the engines comparison is the only mode.
const engineRows = await (await import('./render-engines.mjs')).parentMain();
writeJson(jsonOutPath(), { machine: machine(), engines: engineRows });
