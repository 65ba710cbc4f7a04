/**
 * Where a tool takes its paths when no argument of its own is one: each object of a list
 * (`write_multiple_files({ files: [{ path, content }] })`), one object (`{ target: { path } }`), or the
 * file headers of a patch's text, unified (`--- a/…` / `+++ b/…`) or in the `*** Begin Patch` form
 * (`*** Add File: …`); and how a path is spelled when the tool takes it as a `file://` URI.
 *
 * Promises: `patchText` writes every file it is given, in order, each with its own header, so a tool
 * that reads only its first header meets the later ones unchecked; `fileUri` writes the path raw
 * (each name percent-encoded, never normalized: the tool meets `..` itself), a relative path joined
 * to the root by "/" as the MCP target joins one.
 * Does not promise: that a tool applies every patch form; the classification picks the form its
 * description names (`patchFormOf`), and the mapping file corrects it (docs/contract.md).
 */
import { words } from "./words.js";

/** The two texts of a patch the audit writes. */
export type PatchForm = "unified" | "envelope";

/**
 * The argument that carries a tool's roles: a list whose every item holds them (`fixed`: what each
 * item also sends), one object that holds them, or a patch whose file headers name the paths.
 */
export type Carrier =
  | { kind: "list" | "object"; argument: string; fixed: Record<string, unknown> }
  | { kind: "patch"; argument: string; form: PatchForm };

/** Names of an argument that holds a patch, flattened. */
const PATCH_NAMES = ["patch", "diff", "patchtext", "unifieddiff", "patchcontent", "diffcontent"];

/** Whether an argument of this name, of a tool of this name, holds a patch: its name says so, or a text argument of a patching tool. */
export function holdsPatch(tool: string, argument: string): boolean {
  const flat = words(argument).join("");
  if (PATCH_NAMES.includes(flat)) return true;
  const said = words(tool);
  return (said.includes("patch") || said.includes("diff")) && ["input", "text", "content", "changes", "edits"].includes(flat);
}

/** The form a tool's description shows (`*** Begin Patch`, `*** Add File:`), unified otherwise. */
export function patchFormOf(description: string | undefined): PatchForm {
  return /\*\*\*\s*(Begin Patch|Add File|Update File)/i.test(description ?? "") ? "envelope" : "unified";
}

/**
 * A patch that creates every file with its content: `--- /dev/null` / `+++ b/<path>` hunks (an
 * absolute path without the `b/`), or one `*** Begin Patch` envelope with an `*** Add File:` each.
 */
export function patchText(form: PatchForm, files: readonly { path: string; content: string }[]): string {
  const added = (content: string) => content.split("\n").filter((line, index, lines) => index < lines.length - 1 || line !== "").map((line) => `+${line}`);
  if (form === "envelope") return ["*** Begin Patch", ...files.flatMap(({ path, content }) => [`*** Add File: ${path}`, ...added(content)]), "*** End Patch", ""].join("\n");
  return files
    .flatMap(({ path, content }) => {
      const lines = added(content);
      return ["--- /dev/null", `+++ ${path.startsWith("/") ? path : `b/${path}`}`, `@@ -0,0 +1,${lines.length} @@`, ...lines];
    })
    .concat("")
    .join("\n");
}

/** The path as a `file://` URI: each name percent-encoded, `..` left as it is; a relative one below `root`. */
export function fileUri(path: string, root: string | undefined): string {
  const absolute = path.startsWith("/") || root === undefined ? path : `${root}/${path}`;
  return `file://${absolute.split("/").map(encodeURIComponent).join("/")}`;
}

/** Whether an argument of this name or format takes a URI rather than a path. */
export function takesUri(argument: string, format: unknown): boolean {
  const said = words(argument);
  return format === "uri" || format === "uri-reference" || said.includes("uri") || said.includes("url");
}
