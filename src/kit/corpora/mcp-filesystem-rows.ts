/**
 * The vocabulary of the MCP filesystem server's corpus (mcp-filesystem.ts): where its tests live, the
 * design reasons the kit answers some rows otherwise, the verdicts on both sides, and `testFile`, which
 * numbers one upstream file's rows in file order.
 */
import type { Difference, KitAnswer, LexicalRow, Source, TreeRow, UpstreamVerdict } from "./corpus.js";

export const TESTS = "src/filesystem/__tests__";

export const design = (argument: string): Difference => ({ kind: "design", argument });

export const NUL_IN_WORKSPACE_PATH = design(
  "isInside compares strings, and a NUL byte is an ordinary character to it; workspacePath refuses every candidate with a NUL byte before any check (fields.nulBytes), so no tool ever opens such a path",
);
export const NEVER_FOLLOWS_OUT = design(
  "the kit has no mode that follows a link out of the root: the server's opt-in --follow-symlinks is exactly the access the kit exists to refuse",
);
export const LANDS_INSIDE = design(
  "the chapter judges where a link chain lands, not how many hops it takes outside: this one ends inside the root, so nothing outside is opened (the verified tools refuse the chain, since its link texts leave the root)",
);
export const VERIFIED_LINK_TEXT = design(
  "the verified walk follows link texts itself, from the pinned root: an absolute text must spell the root's real path, and a link that leaves the root is refused even when the chain comes back (as Go's os.Root refuses it); the chapter's realpath accepts where it lands",
);
export const BY_NAME = design(
  "an absolute path is judged by name against the root's real path before any filesystem call, so that nothing about the outside shows in the answer; a request that spells the root through another symlinked path leaves the root by name and is refused (relative paths, the real path and the spelling the root was handed over as work)",
);
export const BYTES_NOT_UNICODE = design(
  "names are bytes: the kit opens the name it was given, and Linux filesystems do not normalise Unicode, so the composed and the decomposed name are two different names (the request is inside either way)",
);
export const ROOT_RESOLVED_FIRST = design(
  "the kit resolves the root before comparing, so the root's real path and the path that names it are one workspace; upstream's test pins the refusal that its own comment calls incorrect",
);

export const ESCAPE = { verdict: "escape" } as const;
export const accepted = (lands: string) => ({ verdict: "accepted", lands }) as const;
export const accepts = (lands: string): UpstreamVerdict => ({ accepts: true, lands });
export const refuses = (reason: string): UpstreamVerdict => ({ accepts: false, reason });

export const REFUSED: KitAnswer = { outcome: ESCAPE, why: "realpath of the request (or of its nearest existing ancestor) is outside the root" };
export const REFUSED_BY_CHECK: KitAnswer = { outcome: ESCAPE, why: "the chapter's check runs first and refuses it" };
export const inside = (lands: string, why = "realpath lands inside the root"): KitAnswer => ({ outcome: accepted(lands), why });

/** Rows where upstream, in its opt-in follow mode, reads a file outside: both tool sets refuse. */
export const REFUSED_THOUGH_FOLLOWED_UPSTREAM = {
  chapter: { ...REFUSED, difference: NEVER_FOLLOWS_OUT },
  verified: { ...REFUSED_BY_CHECK, difference: NEVER_FOLLOWS_OUT },
};

export interface TreeSpec {
  tree: readonly string[];
  root: string;
  tool: "read" | "write";
  path: string;
  upstream: UpstreamVerdict;
  chapter: KitAnswer;
  /** Omitted where the verified tools answer as the chapter's. */
  verified?: KitAnswer;
}

export type LexicalCase = readonly [path: string, upstream: boolean, difference?: Difference];

/** Rows of one upstream test file, numbered in the order they are added. */
export function testFile(name: string, commit: string) {
  const rows: (LexicalRow | TreeRow)[] = [];
  const next = (test: string) => {
    const number = rows.length + 1;
    return { id: `mcp-${name}-${number}`, case: number, source: { file: `${TESTS}/${name}.test.ts`, test, commit } satisfies Source };
  };
  return {
    rows,
    lexical(test: string, flavour: "posix" | "win32", roots: readonly string[], cases: readonly LexicalCase[]) {
      for (const [path, upstream, difference] of cases)
        rows.push({ kind: "lexical", ...next(test), flavour, roots, path, upstream, kit: difference === undefined ? upstream : !upstream, ...(difference === undefined ? {} : { difference }) });
    },
    tree(test: string, spec: TreeSpec) {
      const { chapter, verified, ...rest } = spec;
      rows.push({ kind: "tree", ...next(test), ...rest, kit: { chapter, verified: verified ?? { ...chapter, why: `as the chapter's: ${chapter.why}` } } });
    },
  };
}

export const P = "/srv/user/project";

/** The two directories upstream's symlink tests lay out: the allowed one (the root) and the one beside it. */
export const ALLOWED_FORBIDDEN = ["allowed/", "forbidden/"];
