/** `text` as one POSIX shell word: bare when it is plainly safe, single-quoted otherwise. */
export function shellWord(text: string): string {
  return /^[\w./@:-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
