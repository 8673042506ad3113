/**
 * UTF-8 arithmetic over JavaScript strings, without encoding them whole: a
 * result of 30 MB is measured where it lies and cut with a small scratch
 * buffer, never copied into a buffer of its own size.
 *
 * A lone surrogate counts 3 bytes, as the U+FFFD that every UTF-8 encoder
 * writes in its place.
 */

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

// Typed as always present; on runtimes without Node's globals it is not.
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;
/** Node's counter: native, and it copies nothing. Absent on runtimes without `Buffer`. */
const nativeByteLength: ((text: string) => number) | undefined =
  typeof NodeBuffer?.byteLength === 'function' ? (text) => NodeBuffer.byteLength(text, 'utf8') : undefined;

/**
 * The UTF-8 byte length of `text`, counted over its code units. Stops as soon
 * as the count passes `stopAbove` and returns that partial count (which is
 * then above `stopAbove`, all the caller needs to know).
 */
export function utf8Length(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  const length = text.length;
  // Every code unit takes at least one byte: a string this long is over already.
  if (length > stopAbove) return length;
  let bytes = 0;
  for (let i = 0; i < length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (isHigh(unit) && i + 1 < length && isLow(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
    if (bytes > stopAbove) return bytes;
  }
  return bytes;
}

/**
 * The UTF-8 byte length of `text`, or a count above `stopAbove` once it is
 * known to be over. Uses the native counter where there is one: it is as
 * fast as the code-unit counter on short strings and up to hundreds of times
 * faster on long ones (bench/egress.bench.ts), early exit included.
 */
export function byteLength(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  if (text.length > stopAbove) return text.length;
  return nativeByteLength === undefined ? utf8Length(text, stopAbove) : nativeByteLength(text);
}

/** The scratch buffer a cut encodes through, chunk by chunk. */
const CHUNK_BYTES = 64 * 1_024;
const encoder = new TextEncoder();

/** Where a cut falls: the code-unit index to slice at, and the UTF-8 bytes before it. */
export interface Cut {
  readonly end: number;
  readonly bytes: number;
}

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`. The
 * cut never falls inside a surrogate pair, so the prefix never ends in half
 * a character. The native encoder does the counting, into a scratch buffer
 * of at most 64 KiB that is thrown away.
 */
export function utf8Cut(text: string, maxBytes: number): Cut {
  const scratch = new Uint8Array(Math.max(0, Math.min(maxBytes, CHUNK_BYTES)));
  let end = 0;
  let bytes = 0;
  while (bytes < maxBytes && end < text.length) {
    const size = Math.min(maxBytes - bytes, CHUNK_BYTES);
    // At most `size` code units can fit; end the slice between characters.
    let stop = Math.min(text.length, end + size);
    if (stop < text.length && stop - 1 > end && isHigh(text.charCodeAt(stop - 1)) && isLow(text.charCodeAt(stop)))
      stop--;
    const { read, written } = encoder.encodeInto(text.slice(end, stop), scratch.subarray(0, size));
    if (read === 0) break; // the next character does not fit in what is left
    end += read;
    bytes += written;
  }
  return { end, bytes };
}

interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * `text` with every lone surrogate replaced by U+FFFD (same UTF-8 size: 3
 * bytes), or `text` itself when it has none.
 */
export function wellFormed(text: string): string {
  const s = text as unknown as WellFormed;
  return s.isWellFormed() ? text : s.toWellFormed();
}
