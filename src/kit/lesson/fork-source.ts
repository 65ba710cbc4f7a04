/**
 * The source of a lesson's fork: one plain ESM file a student edits, with the chapter's path check
 * restated in full so that each seam is a function in plain sight. It imports node and the package's
 * public entry point only (`workspace-gates`: the tools, the limits and the messages), never a file
 * inside the package, so it runs wherever the package resolves (a project that installed it, or a clone
 * after `npm run build`) and keeps working when copied anywhere in that project.
 *
 * The restated check is fixtures/vulnerable/fork.ts's, written in JavaScript; with both seams written
 * the chapter's way it passes every property a path lesson grades (test/lesson-command.test.ts).
 */

/** The specifier of the package's public entry point, the only import of a fork beside node's. */
const PUBLIC_ENTRY = JSON.stringify("workspace-gates");

/** The two seams the path-check lessons replace; the chapter's way of writing each. */
export const CHAPTER_SEAMS = {
  isInside: `export function isInside(root, path, pathApi = nodePath) {
  const rel = pathApi.relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(\`..\${pathApi.sep}\`) && !pathApi.isAbsolute(rel));
}`,
  pathToOpen: `function pathToOpen(rootReal, candidate, checked) {
  return checked;
}`,
} as const;

export type SeamName = keyof typeof CHAPTER_SEAMS;

export interface PathForkText {
  /** The comment at the top: the lesson, its mistake, the task and the check command. */
  header: string;
  seam: SeamName;
  /** The seam as the lesson ships it: the mistake. */
  broken: string;
}

/** The fork of a path-check lesson: `header`, then the seam with the mistake, then the rest of the check as the chapter writes it. */
export function pathForkSource({ header, seam, broken }: PathForkText): string {
  const seamCode = (name: SeamName) =>
    name === seam
      ? `// ── THE SEAM: the mistake is here; fix it. ──\n${broken}`
      : `// ── Written the chapter's way (not this lesson's seam). ──\n${CHAPTER_SEAMS[name]}`;
  return `${comment(header)}
import { lstatSync, realpathSync } from "node:fs";
import * as fsPromises from "node:fs/promises";
import * as nodePath from "node:path";
import { ESCAPE_MESSAGE, NUL_MESSAGE, bashLimits, bashTool, readTool, writeTool } from ${PUBLIC_ENTRY};

/** Is \`path\` the root or below it? Both are real paths (symlinks resolved). */
${seamCode("isInside")}

/** The path the tools open once \`candidate\` passed the check (\`checked\` is the string that was checked). */
${seamCode("pathToOpen")}

// ── The rest is the chapter's check and tools; nothing below needs to change. ──

/** The chapter's gate 3: the path a tool must use, or \`path escapes workspace\`. */
export async function workspacePath(root, candidate, creating, fsApi = fsPromises) {
  return checkedPath(await fsApi.realpath(root), candidate, creating, fsApi);
}

/** read, write and bash bound to \`root\`, whose real path is taken once, now. */
export function createWorkspaceTools(root, options = {}) {
  const fs = options.fsApi ?? fsPromises;
  const rootReal = pinned(root);
  const check = async (candidate, creating) => checkedPath(await rootReal(), candidate, creating, fs);
  // What the write tool needs of a check for a new file, looked up at once after it: a lookup awaited
  // between the check and the write is a window another process can use (sequences.swapInCall).
  const boundary = Object.assign(check, {
    creating: async (candidate) => {
      const path = await check(candidate, true);
      let existing = path;
      for (; lstatSync(existing, { throwIfNoEntry: false }) === undefined; existing = nodePath.dirname(existing));
      return { path, existing, leaf: existing === path ? lstatSync(path) : undefined };
    },
  });
  return [readTool(boundary), writeTool(boundary), bashTool(boundary, bashLimits(options.bash))];
}

async function checkedPath(rootReal, candidate, creating, fs) {
  if (candidate.includes("\\0")) throw new Error(NUL_MESSAGE);
  const requested = nodePath.resolve(rootReal, candidate);
  let checked = requested;
  if (creating) {
    try {
      await fs.lstat(requested);
    } catch (error) {
      if (error?.code !== "ENOENT") throw error;
      checked = await nearestExistingAncestor(nodePath.dirname(requested), fs);
    }
  }
  let checkedReal;
  try {
    checkedReal = await fs.realpath(checked);
  } catch (error) {
    // What does not resolve is refused when its deepest resolvable ancestor lies outside.
    if (!unresolved(error)) throw error;
    if (!isInside(rootReal, await deepestResolvable(nodePath.dirname(checked), fs), nodePath)) throw new Error(ESCAPE_MESSAGE);
    throw error;
  }
  if (!isInside(rootReal, checkedReal, nodePath)) throw new Error(ESCAPE_MESSAGE);
  if (!(await decodesLosslessly(checked, checkedReal))) throw new Error(ESCAPE_MESSAGE);
  return pathToOpen(rootReal, candidate, requested);
}

/** The root's real path, taken once; a root that does not resolve fails every call. */
function pinned(root) {
  try {
    const real = realpathSync(root);
    return () => Promise.resolve(real);
  } catch (error) {
    return () => Promise.reject(error);
  }
}

/** A name with a byte that is not UTF-8 decodes to U+FFFD, which may spell another entry's name. */
async function decodesLosslessly(path, real) {
  if (!real.includes("\\uFFFD")) return true;
  return Buffer.from(real).equals(await fsPromises.realpath(path, { encoding: "buffer" }));
}

const unresolved = (error) => error?.code === "ENOENT" || error?.code === "ENOTDIR";

async function nearestExistingAncestor(path, fs) {
  for (let current = path; ; current = nodePath.dirname(current)) {
    try {
      await fs.lstat(current);
      return current;
    } catch (error) {
      if (error?.code !== "ENOENT" || nodePath.dirname(current) === current) throw error;
    }
  }
}

async function deepestResolvable(path, fs) {
  for (let current = path; ; current = nodePath.dirname(current)) {
    try {
      return await fs.realpath(current);
    } catch (error) {
      if (!unresolved(error) || nodePath.dirname(current) === current) throw error;
    }
  }
}
`;
}

/** The fork of the TOCTOU lesson: the tools themselves are the seam. */
export function toolsForkSource(header: string): string {
  return `${comment(header)}
import { createWorkspaceTools as chapterTools } from ${PUBLIC_ENTRY};

// ── THE SEAM: the tools the agent is given. ──
// The chapter's tools check a path by name, then open it by name: between the two, a directory on the
// way can be swapped for a symlink to the outside. Give the agent tools that open what they checked.
export function createWorkspaceTools(root, options = {}) {
  return chapterTools(root, options);
}
`;
}

function comment(text: string): string {
  return ["/**", ...text.split("\n").map((line) => (line === "" ? " *" : ` * ${line}`)), " */"].join("\n");
}
