/**
 * Names a careless containment check may confuse with the root's: each is the root's name under one
 * transformation that some layer undoes or ignores. A sandbox creates every twin of its root beside
 * it, as a canary.
 *
 * Promises: `rootTwins(name)` never answers the name itself, and answers each distinct twin once:
 * - similar prefix: the name plus a suffix (`ws-other`, `ws2`, `ws ` with a trailing space, `ws'` with
 *   a trailing quote, …), which `startsWith(root)` without a separator admits;
 * - letter case (`WS`), which a case-insensitive compare admits on a case-sensitive filesystem;
 * - Unicode normalization (NFC and NFD spellings of `wé`), which a compare after `normalize()` admits;
 * - a lossily decoded byte: where the name holds U+FFFD, the raw byte 0xFF in its place (a `Buffer`
 *   name, since no JS string spells it), which `realpath` and `readdir` decode to the root's own name.
 */

/** Suffixes that turn the root's name into a sibling whose path starts with the root's path. */
export const SIMILAR_PREFIX_SUFFIXES = ["-other", "2", "_bak", " ", "'", ".d", "..", "-"] as const;

/** The most twins a string can name: the letter case, the NFD and NFC spellings, and each suffix. */
export const MOST_NAMED_TWINS = 3 + SIMILAR_PREFIX_SUFFIXES.length;

export type TwinTransform = "similar prefix" | "letter case" | "normalization" | "lossy byte";

export interface RootTwin {
  transform: TwinTransform;
  /** A string name, or raw bytes where the name cannot be a JS string. */
  name: string | Buffer;
}

/** U+FFFD, what a UTF-8 decoder makes of a byte it cannot decode. */
export const REPLACEMENT_CHARACTER = "\uFFFD";

export function rootTwins(root: string): RootTwin[] {
  // The one-of-a-kind transformations first, so that `sibling0` is always the letter-case twin.
  const swapped = [...root].map((char) => (char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase())).join("");
  const twins: RootTwin[] = [
    { transform: "letter case", name: swapped },
    { transform: "normalization", name: root.normalize("NFD") },
    { transform: "normalization", name: root.normalize("NFC") },
  ];
  if (root.includes(REPLACEMENT_CHARACTER)) {
    const bytes = root.split(REPLACEMENT_CHARACTER).map((part) => Buffer.from(part, "utf8"));
    const raw = bytes.flatMap((part, index) => (index === 0 ? [part] : [Buffer.from([0xff]), part]));
    twins.push({ transform: "lossy byte", name: Buffer.concat(raw) });
  }
  twins.push(...SIMILAR_PREFIX_SUFFIXES.map((suffix): RootTwin => ({ transform: "similar prefix", name: `${root}${suffix}` })));
  const seen = new Set<string>([`s:${root}`]);
  return twins.filter(({ name }) => {
    const key = typeof name === "string" ? `s:${name}` : `b:${name.toString("hex")}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The twins a JS string can name, in `rootTwins` order: what `sibling0`, `sibling1`, … stand for. */
export function namedTwins(root: string): string[] {
  return rootTwins(root).flatMap(({ name }) => (typeof name === "string" ? [name] : []));
}
