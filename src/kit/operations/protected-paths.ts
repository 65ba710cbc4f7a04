/**
 * Protected paths: names inside the workspace that a target's tools promise never to read, change or
 * reveal (`.git`, `.env`, a vault's settings), given to the audit as gitignore-style patterns relative
 * to the root (`--protect`, the mapping's `protect`, the action's `protect` input).
 *
 * The subset of gitignore taken: `*` and `?` within a name, `[abc]` and `[!abc]`, `**` as a whole
 * component (any number of directories); a pattern without a slash but a trailing one matches a name
 * at any depth, one with a slash elsewhere is anchored at the root (a leading `/` only anchors); a
 * trailing `/` matches directories only. Whatever a pattern matches protects everything under it.
 * A name is compared as the filesystems where spellings meet would take it: letters folded to lower
 * case, canonical composition (NFC), trailing dots and spaces trimmed; so `.GIT`, `.git.` and `.git `
 * are `.git` (they are on macOS and Windows, and a server must not rely on the disk it runs on).
 *
 * Promises: `parseProtectPatterns` accepts exactly that subset and otherwise throws
 * `ProtectPatternError` naming the pattern and the rule it breaks (negation, escapes, `.` or `..`
 * components, an empty component, nothing but `**`); `isProtectedPath` answers whether a path from the
 * root lies in or under an entry a pattern matches; `instanceOf` spells a name the pattern matches
 * (`*` as `x`), which `isProtectedPath` takes for protected.
 * Does not promise: gitignore's negation (`!`) or escapes; a pattern using them is refused, never
 * taken otherwise.
 */

/** What the audit writes in every protected file it lays out, and nothing else holds: an answer or a file with it got it from one. */
export const PROTECTED_SECRET = "PROTECTED-SECRET-5c1e";

/** A pattern as parsed: its components, whether it is anchored at the root, whether it matches directories only. */
export interface ProtectedPattern {
  /** As the user wrote it, for reports. */
  text: string;
  components: readonly string[];
  anchored: boolean;
  directoryOnly: boolean;
}

/** A pattern the audit cannot take as the user meant it. */
export class ProtectPatternError extends Error {}

/** The patterns in `values` (each may hold several, comma-separated), parsed; `where` names their source in an error. */
export function parseProtectPatterns(values: readonly string[], where: string): ProtectedPattern[] {
  const texts = values.flatMap((value) => value.split(",")).map((text) => text.trim()).filter((text) => text !== "");
  if (texts.length === 0) throw new ProtectPatternError(`${where} needs at least one pattern, such as .git or **/.env`);
  return texts.map((text) => parsePattern(text, where));
}

function parsePattern(text: string, where: string): ProtectedPattern {
  const refuse = (rule: string): never => {
    throw new ProtectPatternError(`${where}: the pattern ${JSON.stringify(text)} ${rule}`);
  };
  if (text.startsWith("!")) refuse("negates: negation is not supported (list only what is protected)");
  if (text.includes("\\")) refuse("holds a backslash: escapes are not supported");
  const directoryOnly = text.endsWith("/");
  const body = text.replace(/\/+$/, "");
  const anchored = body.includes("/");
  const components = body.replace(/^\//, "").split("/");
  if (components.some((component) => component === "")) refuse("has an empty component (//)");
  if (components.some((component) => component === "." || component === "..")) refuse("has a . or .. component: a protected path lies inside the root, spelled from it");
  if (components.every((component) => component === "**")) refuse("protects everything: name what is protected");
  for (const component of components) if (/\[[^\]]*$/.test(component)) refuse(`has an unclosed [ in ${JSON.stringify(component)}`);
  return { text, components, anchored, directoryOnly };
}

/** A name as the filesystems where spellings meet compare it: lower case, NFC, no trailing dots or spaces. */
export function foldName(name: string): string {
  const trimmed = name.replace(/[. ]+$/, "");
  return (trimmed === "" ? name : trimmed).normalize("NFC").toLowerCase();
}

const componentRegex = new Map<string, RegExp>();

/** Whether one name matches one component of a pattern, both folded. */
function matchesComponent(component: string, name: string): boolean {
  let regex = componentRegex.get(component);
  if (regex === undefined) {
    // The component is folded as a name is, its glob characters kept: `.GIT.` is `.git`, `*.KEY` is `*.key`.
    const folded = foldName(component);
    let source = "";
    for (let index = 0; index < folded.length; index += 1) {
      const char = folded[index] as string;
      if (char === "*") source += ".*";
      else if (char === "?") source += ".";
      else if (char === "[") {
        const end = folded.indexOf("]", index + 2);
        const inner = folded.slice(index + 1, end);
        const negated = inner.startsWith("!");
        source += `[${negated ? "^" : ""}${(negated ? inner.slice(1) : inner).replace(/[\\\]^]/g, "\\$&")}]`;
        index = end;
      } else source += char.replace(/[.+^${}()|\\\]]/g, "\\$&");
    }
    regex = new RegExp(`^${source}$`, "su");
    componentRegex.set(component, regex);
  }
  return regex.test(foldName(name));
}

/** Whether `names` (from the start) match `components` exactly, `**` taking any number of names. */
function matchesAll(components: readonly string[], names: readonly string[]): boolean {
  const [first, ...rest] = components;
  if (first === undefined) return names.length === 0;
  if (first === "**") return Array.from({ length: names.length + 1 }, (_, skip) => skip).some((skip) => matchesAll(rest, names.slice(skip)));
  const [name, ...others] = names;
  return name !== undefined && matchesComponent(first, name) && matchesAll(rest, others);
}

/**
 * Whether the entry at `names` (components from the root) is protected: some leading part of it is
 * matched by a pattern (at any depth for an unanchored one). `isDirectory` says whether the entry
 * itself is a directory, for a pattern that matches directories only.
 */
export function isProtectedPath(patterns: readonly ProtectedPattern[], names: readonly string[], isDirectory: boolean): boolean {
  return patterns.some((pattern) => {
    for (let end = 1; end <= names.length; end += 1) {
      if (pattern.directoryOnly && end === names.length && !isDirectory) continue;
      const leading = names.slice(0, end);
      const matched = pattern.anchored ? matchesAll(pattern.components, leading) : leading.length > 0 && matchesComponent(pattern.components[0] as string, leading.at(-1) as string);
      if (matched) return true;
    }
    return false;
  });
}

/** One spelling of a glob component: `*` and `?` as `x`, a set as its first member (or a letter outside a negated one). */
function instanceName(component: string): string {
  let name = "";
  for (let index = 0; index < component.length; index += 1) {
    const char = component[index] as string;
    if (char === "*" || char === "?") name += "x";
    else if (char === "[") {
      const end = component.indexOf("]", index + 2);
      const inner = component.slice(index + 1, end);
      name += inner.startsWith("!") ? ([..."xyzqw"].find((letter) => !inner.slice(1).toLowerCase().includes(letter)) ?? "_") : inner.charAt(0);
      index = end;
    } else name += char;
  }
  return name;
}

/** The components of a path from the root that `pattern` matches: its `**` left out, its globs spelled (`instanceName`). */
export function instanceOf(pattern: ProtectedPattern): string[] {
  return pattern.components.filter((component) => component !== "**").map(instanceName);
}

/** Whether the pattern matches at any depth (no slash but a trailing one, or a leading `**`). */
export const matchesNested = (pattern: ProtectedPattern): boolean => !pattern.anchored || pattern.components[0] === "**";
