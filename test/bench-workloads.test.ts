/**
 * The bench workloads (bench/lib/workloads.ts) are real text, and the speed figures on them
 * are only worth something if the ids are exact there too: on a sample of every workload,
 * native == JS == the Rust `tokenizers` oracle, for every bundled model. Also: a workload is
 * deterministic (same seed → same bytes and sha256). Speed is never checked here.
 */
import { describe, expect, it } from 'vitest';
import { buildWorkload, WORKLOAD_NAMES } from 'promptenc/bench';
import { nativeAddonStatus } from '../src/backend/native.js';
import { loadTokenizer } from '../src/tokenizer.js';
import { MODELS, oracleEncode } from './helpers/oracle.js';

const status = nativeAddonStatus();
if (!status.available) console.warn(`bench-workloads: native side skipped (addon not built: ${status.error})`);

const SAMPLE_BYTES = 12 * 1024;

/** A sample of each workload: its first documents up to SAMPLE_BYTES, and for the one-document rank table a slice from its middle too. */
function samples(): Array<{ name: string; text: string }> {
  return WORKLOAD_NAMES.flatMap((name) => {
    const w = buildWorkload(name, { sizeBytes: 96 * 1024 });
    let text = '';
    for (const d of w.documents) {
      if (text.length >= SAMPLE_BYTES) break;
      text += d.text.slice(0, SAMPLE_BYTES - text.length);
    }
    const out: Array<{ name: string; text: string }> = [{ name, text }];
    if (w.documents.length === 1) {
      const mid = Math.floor(w.documents[0]!.text.length / 2);
      out.push({ name: `${name} (middle)`, text: w.documents[0]!.text.slice(mid, mid + SAMPLE_BYTES) });
    }
    return out;
  });
}

describe('bench workloads', () => {
  it('are deterministic: the same seed gives the same bytes', () => {
    for (const name of WORKLOAD_NAMES) {
      const a = buildWorkload(name, { sizeBytes: 64 * 1024, seed: 7 });
      const b = buildWorkload(name, { sizeBytes: 64 * 1024, seed: 7 });
      expect(a.sha256, name).toBe(b.sha256);
      expect(a.bytes, name).toBeGreaterThan(name === 'rank-table' ? 1_000_000 : 32 * 1024);
    }
  });

  const cases = samples();
  for (const m of MODELS) {
    it(`${m.name}: native == JS == oracle on a sample of every workload`, async () => {
      const js = await loadTokenizer(m.name, { backend: 'js' });
      const native = status.available ? await loadTokenizer(m.name, { backend: 'native' }) : undefined;
      for (const c of cases) {
        const expected = await oracleEncode(m.path, c.text, false);
        expect(Array.from(js.encode(c.text, { addSpecialTokens: false })), `${c.name} js`).toEqual(expected);
        if (native) expect(Array.from(native.encode(c.text, { addSpecialTokens: false })), `${c.name} native`).toEqual(expected);
      }
    }, 120_000);
  }
});
