// Gate 4 in bounded memory: the chunked read gives exactly truncateRead(readFile(...)) for any bytes
// and any chunk size (invalid UTF-8, split sequences, surrogate pairs at the cut, BOM).
import { type FileHandle, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileChunks, readTruncated } from "../src/gates/read-truncated.js";
import { ReadTruncator, truncateRead } from "../src/gates/truncate.js";

// Bytes that stress a UTF-8 decoder: lead bytes of every length, the lead bytes with narrowed second
// byte ranges (E0, ED, F0, F4), continuation bytes, bytes that never occur (C0, C1, F5–FF), a BOM.
const trickyByte = fc.oneof(
  fc.integer({ min: 0, max: 255 }),
  fc.constantFrom(0x00, 0x41, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbb, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff),
);
const segmentBytes = fc.oneof(
  fc.array(trickyByte, { maxLength: 8 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ unit: "binary", maxLength: 4 }).map((text) => Buffer.from(text, "utf8")),
  fc.constant(Buffer.from([0xef, 0xbb, 0xbf])),
);
// Most runs are short; some segments repeat enough to pass the 16 000-character budget, so the cut
// falls at many different offsets inside multi-byte sequences and surrogate pairs.
const repeat = fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1_000, max: 6_000 }));
const fileBytes = (maxSegments: number) =>
  fc.array(fc.tuple(segmentBytes, repeat), { maxLength: maxSegments }).map((segments) =>
    Buffer.concat(segments.map(([bytes, times]) => Buffer.concat(Array.from({ length: times }, () => bytes)))),
  );
const chunkSize = fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 9, max: 70_000 }));

/** `size`, grown when it would cut `length` items into more than `maxPieces`: tiny chunks are tried on short inputs and every run stays fast. */
const boundedSize = (length: number, size: number, maxPieces: number) => Math.max(size, Math.ceil(length / maxPieces));

/** [start, end) of consecutive pieces covering `length` items. */
function pieceBounds(length: number, size: number): [number, number][] {
  const step = boundedSize(length, size, 5_000);
  const bounds: [number, number][] = [];
  for (let start = 0; start < length; start += step) bounds.push([start, Math.min(length, start + step)]);
  return bounds;
}
const splitText = (text: string, size: number) => pieceBounds(text.length, size).map(([start, end]) => text.slice(start, end));
const splitBytes = (bytes: Buffer, size: number) => pieceBounds(bytes.length, size).map(([start, end]) => bytes.subarray(start, end));

function truncateInPieces(pieces: readonly string[]): string {
  const truncator = new ReadTruncator();
  for (const piece of pieces) truncator.push(piece);
  return truncator.result();
}

describe("ReadTruncator: truncateRead for text pushed in pieces", () => {
  it("equals truncateRead of the joined text, for any text cut into pieces of any size", () => {
    const text = fc
      .array(fc.tuple(fc.string({ unit: "binary", maxLength: 4 }), repeat), { maxLength: 5 })
      .map((segments) => segments.map(([piece, times]) => piece.repeat(times)).join(""));
    fc.assert(
      fc.property(text, chunkSize, (whole, size) => {
        expect(truncateInPieces(splitText(whole, size))).toBe(truncateRead(whole));
      }),
      { numRuns: 100 },
    );
  });

  it("answers the empty string when nothing or only empty pieces were pushed", () => {
    expect(truncateInPieces([])).toBe("");
    expect(truncateInPieces(["", ""])).toBe("");
  });

  it("keeps a whole piece of over 8 000 characters as the new tail", () => {
    const pieces = ["H".repeat(16_000), "M".repeat(100), "T".repeat(9_000)];
    expect(truncateInPieces(pieces)).toBe(`${"H".repeat(8_000)}\n[truncated 9100 characters]\n${"T".repeat(8_000)}`);
  });
});

describe("readTruncated: decoding UTF-8 chunk by chunk", () => {
  it("equals truncateRead of the whole buffer decoded at once, for any bytes in chunks of any size", async () => {
    await fc.assert(
      fc.asyncProperty(fileBytes(4), chunkSize, async (bytes, size) => {
        expect(await readTruncated(splitBytes(bytes, size))).toBe(truncateRead(bytes.toString("utf8")));
      }),
      { numRuns: 100 },
    );
  });

  it.each([
    ["a 4-byte character in four 1-byte chunks", [[0xf0], [0x9f], [0x98], [0x80]], "😀"],
    ["a 3-byte sequence cut short by an ASCII byte in the next chunk", [[0xe2, 0x82], [0x41]], "\ufffdA"],
    ["a sequence left incomplete at the end of the file", [[0x41, 0xf0], [0x9f]], "A\ufffd"],
    ["E0 followed by a continuation byte it does not allow", [[0xe0], [0x80], [0x41]], "\ufffd\ufffdA"],
    ["a byte order mark, which is kept", [[0xef], [0xbb, 0xbf, 0x78]], "\ufeffx"],
  ])("decodes %s as a whole-buffer decode does", async (_label, chunks, expected) => {
    const buffers = chunks.map((bytes) => Buffer.from(bytes));
    expect(Buffer.concat(buffers).toString("utf8")).toBe(expected);
    expect(await readTruncated(buffers)).toBe(expected);
  });

  it("keeps exactly 16 000 two-byte characters whole when every other one straddles a chunk", async () => {
    const text = "é".repeat(16_000);
    expect(await readTruncated(splitBytes(Buffer.from(text), 3))).toBe(text);
  });

  it("cuts 16 001 two-byte characters to 8 000 + marker + 8 000", async () => {
    const result = await readTruncated(splitBytes(Buffer.from("é".repeat(16_001)), 3));
    expect(result).toBe(`${"é".repeat(8_000)}\n[truncated 1 characters]\n${"é".repeat(8_000)}`);
  });

  it("cuts a surrogate pair at the head boundary where truncateRead cuts it", async () => {
    const text = `${"a".repeat(7_999)}😀${"b".repeat(9_000)}`;
    const result = await readTruncated(splitBytes(Buffer.from(text), 5));
    expect(result).toBe(`${"a".repeat(7_999)}\ud83d\n[truncated 1001 characters]\n${"b".repeat(8_000)}`);
    expect(result).toBe(truncateRead(text));
  });

  it("cuts a surrogate pair at the tail boundary where truncateRead cuts it", async () => {
    const text = `${"a".repeat(9_000)}😀${"b".repeat(7_999)}`;
    const result = await readTruncated(splitBytes(Buffer.from(text), 5));
    expect(result).toBe(`${"a".repeat(8_000)}\n[truncated 1001 characters]\n\ude00${"b".repeat(7_999)}`);
    expect(result).toBe(truncateRead(text));
  });
});

describe("fileChunks: reading through a file handle", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "workspace-gates-chunks-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function readThroughHandle(path: string, statSize: number, size: number): Promise<string> {
    const handle = await open(path, "r");
    try {
      return await readTruncated(fileChunks(handle, statSize, size));
    } finally {
      await handle.close();
    }
  }

  it("equals truncateRead(readFile(path, 'utf8')) for any file and chunk size", async () => {
    const path = join(dir, "file.bin");
    await fc.assert(
      fc.asyncProperty(fileBytes(3), chunkSize, async (bytes, size) => {
        await writeFile(path, bytes);
        // At most 2 000 reads per run: a read through the handle costs far more than a decode in memory.
        expect(await readThroughHandle(path, bytes.length, boundedSize(bytes.length, size, 2_000))).toBe(truncateRead(await readFile(path, "utf8")));
      }),
      { numRuns: 30 },
    );
  });

  it("stops at the size stat reported, as readFile does, when the file grew since", async () => {
    const path = join(dir, "grown.txt");
    await writeFile(path, "0123456789");
    expect(await readThroughHandle(path, 4, 3)).toBe("0123");
  });

  it("reads to end of file when stat reported a size of 0, as /proc files do", async () => {
    const path = join(dir, "procfs-like.txt");
    await writeFile(path, "0123456789");
    expect(await readThroughHandle(path, 0, 3)).toBe("0123456789");
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses a chunk size of %s, which could never make progress", async (size) => {
    const path = join(dir, "any.txt");
    await writeFile(path, "x");
    await expect(readThroughHandle(path, 1, size)).rejects.toThrow(new RangeError(`chunkBytes must be a positive integer, got ${size}`));
  });

  // Memory stays bounded by the chunk size, a small file costs no more than its size, and a file
  // read to the size stat reported takes no extra read to confirm its end.
  it.each([
    ["a file smaller than a chunk: one buffer of its size, one read", 10, 10, 64, [[10, 10]]],
    ["a file of several chunks: a chunk-sized buffer, the last read only what is left", 10, 10, 3, [[3, 3], [3, 3], [3, 3], [3, 1]]],
    ["a file larger than stat said (it grew): no read past the stat size", 10, 4, 3, [[3, 3], [3, 1]]],
    ["stat size 0, as /proc reports: chunk-sized reads until one returns nothing", 5, 0, 3, [[3, 3], [3, 3], [3, 3]]],
  ])("reads %s", async (_label, fileSize, statSize, chunkBytes, expectedReads) => {
    const path = join(dir, "counted.txt");
    await writeFile(path, "x".repeat(fileSize));
    const handle = await open(path, "r");
    try {
      const reads: [bufferLength: number, wanted: number][] = [];
      const counting = {
        read: (buffer: Buffer, offset: number, length: number, position: null) => {
          reads.push([buffer.length, length]);
          return handle.read(buffer, offset, length, position);
        },
      } as unknown as FileHandle;
      const text = await readTruncated(fileChunks(counting, statSize, chunkBytes));
      expect(text).toBe("x".repeat(statSize === 0 ? fileSize : Math.min(fileSize, statSize)));
      expect(reads).toEqual(expectedReads);
    } finally {
      await handle.close();
    }
  });
});

describe("readTruncated with a signal", () => {
  it("stops at the first chunk after the signal fires, with the signal's reason, and asks for no more", async () => {
    const controller = new AbortController();
    const reason = new Error("stop here");
    let pulled = 0;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (;;) {
        pulled += 1;
        if (pulled === 3) controller.abort(reason);
        yield Buffer.from("abc");
      }
    }
    await expect(readTruncated(chunks(), controller.signal)).rejects.toBe(reason);
    expect(pulled).toBe(3);
  });

  it("reads to the end while the signal has not fired", async () => {
    await expect(readTruncated([Buffer.from("ab"), Buffer.from("c")], new AbortController().signal)).resolves.toBe("abc");
  });
});
