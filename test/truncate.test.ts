// Gate 4, the chapter's read rule: head, a marker with the exact dropped count, and tail.
import { describe, expect, it } from "vitest";
import { MAX_READ_CHARS, truncateHead, truncateRead, truncateTail } from "../src/gates/truncate.js";

// A text whose every position is recognisable: 'a'…'z' repeated, with the index every 1000 chars.
function numbered(length: number): string {
  let text = "";
  while (text.length < length) text += String.fromCharCode(97 + (text.length % 26));
  return text;
}

describe("truncateRead (the chapter's read rule)", () => {
  it("leaves a file of exactly 16 000 characters whole", () => {
    const text = numbered(16_000);
    expect(MAX_READ_CHARS).toBe(16_000);
    expect(truncateRead(text)).toBe(text);
  });

  it("cuts 18 000 characters to 8 000 + marker + 8 000", () => {
    const text = "H".repeat(8_000) + "M".repeat(2_000) + "T".repeat(8_000);
    expect(truncateRead(text)).toBe(`${"H".repeat(8_000)}\n[truncated 2000 characters]\n${"T".repeat(8_000)}`);
  });

  it("reports one dropped character at 16 001", () => {
    const text = numbered(16_001);
    const out = truncateRead(text);
    expect(out).toContain("\n[truncated 1 characters]\n");
    expect(out.startsWith(text.slice(0, 8_000))).toBe(true);
    expect(out.endsWith(text.slice(8_001))).toBe(true);
  });
});

describe("truncateHead / truncateTail", () => {
  it("keep text within the budget unchanged", () => {
    expect(truncateHead("abc", 3)).toBe("abc");
    expect(truncateTail("abc", 3)).toBe("abc");
  });

  it("keep the head or the tail and count what they drop", () => {
    expect(truncateHead("abcdef", 2)).toBe("ab\n[truncated 4 characters]");
    expect(truncateTail("abcdef", 2)).toBe("[truncated 4 characters]\nef");
  });
});
