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
  return joinReadCut(content.slice(0, READ_HEAD_CHARS), content.length, content.slice(-READ_TAIL_CHARS));
}

/**
 * `truncateRead` for text that arrives in pieces, so a huge file never has to be one string:
 * after any sequence of `push` calls, `result()` equals `truncateRead` of the pieces joined.
 * It holds at most MAX_READ_CHARS characters plus the piece being pushed; the length is counted in
 * UTF-16 code units, as `truncateRead` counts it, so a surrogate pair may be cut at the same places.
 */
export class ReadTruncator {
  #length = 0;
  /** Everything pushed so far, while the length is within the budget; unused once it is over. */
  #whole = "";
  // Stryker disable next-line StringLiteral: never read as initialised: the push that first goes over the budget assigns it
  #head = "";
  /** The last READ_TAIL_CHARS code units, once the length is over the budget. */
  // Stryker disable next-line StringLiteral: never read as initialised: the push that first goes over the budget assigns it
  #tail = "";

  push(piece: string): void {
    const wasOver = this.#length > MAX_READ_CHARS;
    this.#length += piece.length;
    if (wasOver) {
      // Slicing the piece alone avoids copying the old tail into a string that is thrown away.
      // Stryker disable next-line ConditionalExpression,EqualityOperator: both branches keep the same last READ_TAIL_CHARS units; the first only skips a copy
      this.#tail = piece.length >= READ_TAIL_CHARS ? piece.slice(-READ_TAIL_CHARS) : (this.#tail + piece).slice(-READ_TAIL_CHARS);
      return;
    }
    this.#whole += piece;
    if (this.#length > MAX_READ_CHARS) {
      this.#head = this.#whole.slice(0, READ_HEAD_CHARS);
      this.#tail = this.#whole.slice(-READ_TAIL_CHARS);
      // Stryker disable next-line StringLiteral: only frees the text; #whole is never read again once the length is over the budget
      this.#whole = "";
    }
  }

  result(): string {
    return this.#length <= MAX_READ_CHARS ? this.#whole : joinReadCut(this.#head, this.#length, this.#tail);
  }
}

/** The one place that lays out a cut read: head, marker with the count over the budget, tail. */
function joinReadCut(head: string, totalLength: number, tail: string): string {
  return `${head}\n${truncationMarker(totalLength - MAX_READ_CHARS)}\n${tail}`;
}
