/**
 * The read rule of gate 4 applied while a file is read, so reading a huge file never holds it whole.
 *
 * Promises: `readTruncated(chunks)` equals `truncateRead(Buffer.concat(chunks).toString("utf8"))`,
 * the same characters as `truncateRead(await readFile(path, "utf8"))`, for any bytes and any way of
 * cutting them into chunks: invalid UTF-8 becomes U+FFFD exactly as a whole-buffer decode does, a
 * multi-byte sequence split across chunks is decoded once, and a BOM is kept. `fileChunks` reads a file
 * handle as `readFile` does: to end of file, or to the size `stat` reported when that size is not 0.
 *
 * Costs: memory is bounded (one read buffer of 1 MiB, one decoded slice of at most 64 KiB, and the
 * 16 000 characters kept); time is proportional to the file's size, because the dropped count is in
 * UTF-16 code units and the only exact way to count them is to decode the middle too (a 4-byte
 * sequence is 2 units, a 3-byte one is 1, and each run of invalid bytes is as many U+FFFD as the
 * decoder emits). Files above V8's largest string (about 512 Mi characters), which
 * `readFile(path, "utf8")` cannot return at all, are read the same way.
 * With a `signal`, reading stops at the first chunk after it fires, rejecting with its reason, so a
 * read that its caller gave up on does not go on through a huge file.
 * Does not promise: a consistent snapshot of a file that changes while it is read.
 */
import type { FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { ReadTruncator } from "./truncate.js";

/** Bytes per read: each read is a trip through libuv's thread pool, so few and large (1 GiB: 1 Ki reads). */
export const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * Bytes per decode. At most 32 Ki code units come out, at most 64 KiB even as a two-byte string, which
 * stays below V8's large-object threshold (128 KiB): such strings die young and cheaply, while a
 * large-object string per decode waits for full collections (1 GiB in 128 KiB decodes measured 20x
 * slower than in 32 KiB ones).
 */
const DECODE_BYTES = 32 * 1024;

export async function readTruncated(chunks: AsyncIterable<Buffer> | Iterable<Buffer>, signal?: AbortSignal): Promise<string> {
  const decoder = new StringDecoder("utf8");
  const kept = new ReadTruncator();
  for await (const chunk of chunks) {
    signal?.throwIfAborted();
    // Stryker disable next-line EqualityOperator: one more turn at start === chunk.length decodes an empty slice to "", and pushing "" changes nothing
    for (let start = 0; start < chunk.length; start += DECODE_BYTES) kept.push(decoder.write(chunk.subarray(start, start + DECODE_BYTES)));
  }
  kept.push(decoder.end());
  return kept.result();
}

/**
 * The file's bytes, from the handle's current position, in chunks of at most `chunkBytes`. Stops at
 * end of file, or once `statSize` bytes have come when it is not 0 (as `readFile` does, which bounds a
 * read of a file that keeps growing; a size of 0 is what /proc reports, so those read to the end).
 * Every chunk is a view of one reused buffer, valid until the next one is requested: consume it first.
 */
export async function* fileChunks(handle: FileHandle, statSize: number, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
  if (!(Number.isInteger(chunkBytes) && chunkBytes > 0)) throw new RangeError(`chunkBytes must be a positive integer, got ${chunkBytes}`);
  // A small file gets a buffer of its own size: one read returns all of it and the size ends the loop,
  // without the second read that would only confirm end of file.
  const buffer = Buffer.allocUnsafe(statSize > 0 ? Math.min(chunkBytes, statSize) : chunkBytes);
  let total = 0;
  for (;;) {
    const wanted = statSize > 0 ? Math.min(buffer.length, statSize - total) : buffer.length;
    const { bytesRead } = await handle.read(buffer, 0, wanted, null);
    if (bytesRead === 0) return;
    yield buffer.subarray(0, bytesRead);
    total += bytesRead;
    if (statSize > 0 && total >= statSize) return;
  }
}
