/**
 * A tar archive written from a list of entries, as the audit lays one into a workspace for a tool that
 * extracts archives (audit/properties/archives.ts): ustar headers, with a pax header before an entry
 * whose name or link target does not fit ustar's fields.
 *
 * Promises: `tarBytes` writes every entry in order, its name and link target exactly as given (`../`,
 * an absolute name, a link out: a writer that tidied them would hide the attack), a file with its
 * content, each with `ENTRY_MODES`' mode and `ENTRY_TIME` as its time, owned by uid and gid 0; the
 * answer ends with the two zero blocks every reader expects. Python's `tarfile`, GNU tar and bsdtar
 * read it.
 * Does not promise: zip, compression, sparse files, devices, or names that are not UTF-8.
 */

/** One entry of an archive: a file and its content, a directory, or a symbolic or hard link and its target. */
export type TarEntry =
  | { kind: "file"; name: string; content: string }
  | { kind: "directory"; name: string }
  | { kind: "symlink"; name: string; target: string }
  | { kind: "hardlink"; name: string; target: string };

/**
 * Each entry's mode: a private file's and directory's, which no file or directory the sandbox makes
 * has, so an extractor that sets it through a link out changes a canary's mode.
 */
export const ENTRY_MODES: Readonly<Record<TarEntry["kind"], number>> = { file: 0o600, directory: 0o700, symlink: 0o777, hardlink: 0o600 };

/** Every entry's modification time (seconds): one long past, so an extractor that sets it through a link out changes a canary's. */
export const ENTRY_TIME = 1_000_000_000;

const BLOCK = 512;
const TYPE_FLAGS: Readonly<Record<TarEntry["kind"], string>> = { file: "0", hardlink: "1", symlink: "2", directory: "5" };

/** `value` in octal, zero-padded to `width - 1` digits and ended by a NUL, as ustar's numeric fields are. */
const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 1, "0")}\0`;

/** One header block; `name` and `target` must fit their fields (100 bytes each). */
function header(name: string, kind: TarEntry["kind"] | "pax", size: number, target = ""): Buffer {
  const block = Buffer.alloc(BLOCK);
  const put = (text: string, at: number, width: number) => block.write(text, at, width, "utf8");
  put(name, 0, 100);
  put(octal(kind === "pax" ? 0o644 : ENTRY_MODES[kind], 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(ENTRY_TIME, 12), 136, 12);
  put(kind === "pax" ? "x" : TYPE_FLAGS[kind], 156, 1);
  put(target, 157, 100);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  put("root", 265, 32);
  put("root", 297, 32);
  // The checksum is summed with its own field as spaces, then written as six octal digits, NUL, space.
  block.fill(" ", 148, 156);
  const sum = block.reduce((total, byte) => total + byte, 0);
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
  return block;
}

/** `data` and the zeros that end its last block. */
const padded = (data: Buffer) => Buffer.concat([data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK)]);

/** A pax record, `"<length> key=value\n"`, its length counting its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bytes = Buffer.byteLength(body);
  let digits = String(bytes).length;
  while (String(bytes + digits).length !== digits) digits += 1;
  return `${bytes + digits}${body}`;
}

const fits = (text: string) => Buffer.byteLength(text) < 100;

/** The archive holding `entries`, in order. */
export function tarBytes(entries: readonly TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const target = entry.kind === "symlink" || entry.kind === "hardlink" ? entry.target : "";
    const long = [...(fits(entry.name) ? [] : [paxRecord("path", entry.name)]), ...(fits(target) ? [] : [paxRecord("linkpath", target)])];
    if (long.length > 0) {
      const records = Buffer.from(long.join(""));
      blocks.push(header("PaxHeader", "pax", records.length), padded(records));
    }
    const content = entry.kind === "file" ? Buffer.from(entry.content) : Buffer.alloc(0);
    // A name too long for ustar is the pax header's; the ustar field holds a stand-in.
    blocks.push(header(fits(entry.name) ? entry.name : "pax-named-entry", entry.kind, content.length, fits(target) ? target : ""), padded(content));
  }
  return Buffer.concat([...blocks, Buffer.alloc(2 * BLOCK)]);
}
