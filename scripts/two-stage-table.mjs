// Shared by the table generators: a per-code-point byte array as two stages,
// stage1[cp >> 8] = block number, blocks[block][cp & 255] = value (equal blocks stored once).
export function twoStage(perCp) {
  const blocks = [];
  const blockIndex = new Map();
  const stage1 = [];
  for (let hi = 0; hi < 0x1100; hi++) {
    const block = perCp.subarray(hi * 256, hi * 256 + 256);
    const key = Buffer.from(block).toString('latin1');
    let bi = blockIndex.get(key);
    if (bi === undefined) {
      bi = blocks.length;
      blocks.push(block);
      blockIndex.set(key, bi);
    }
    stage1.push(bi);
  }
  return { stage1, blocks };
}
