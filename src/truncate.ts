/**
 * Gate 4 of the chapter, for size: output cut to a budget, always saying how much was dropped.
 *
 * Promises: text within the budget comes back unchanged; longer text keeps exactly the promised
 * characters and carries a marker line `[truncated N characters]` with the exact count N of characters
 * removed. The budget counts UTF-16 code units, as `String.prototype.slice` does (a cut may split a
 * surrogate pair; the count stays exact).
 * Does not promise: that what is kept is what matters. The middle of a read, or the end of a long
 * bash output, is gone; the marker only tells the model there is a hole.
 */

export const MAX_READ_CHARS = 16_000;
const READ_HEAD_CHARS = 8_000;
const READ_TAIL_CHARS = MAX_READ_CHARS - READ_HEAD_CHARS;

export function truncationMarker(dropped: number): string {
  return `[truncated ${dropped} characters]`;
}

/** Keeps the first `max` characters (the head), then the marker. */
export function truncateHead(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n${truncationMarker(text.length - max)}`;
}

/** Keeps the last `max` characters (the tail), after the marker. */
export function truncateTail(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${truncationMarker(text.length - max)}\n${text.slice(text.length - max)}`;
}

/** The chapter's read rule: over 16 000 characters, the first 8 000, the marker, the last 8 000. */
export function truncateRead(content: string): string {
  if (content.length <= MAX_READ_CHARS) return content;
  return `${content.slice(0, READ_HEAD_CHARS)}\n${truncationMarker(content.length - MAX_READ_CHARS)}\n${content.slice(-READ_TAIL_CHARS)}`;
}
