/** GPT-2 `bytes_to_unicode`: BYTE_CHARS[b] is the ByteLevel character of byte b. */
export const BYTE_CHARS: readonly string[] = (() => {
  const out: string[] = [];
  for (let b = 0, k = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    out.push(String.fromCodePoint(printable ? b : 256 + k++));
  }
  return out;
})();
