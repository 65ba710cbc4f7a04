// Go's os.Root test table, replayed row by row against the chapter's read and write tools on real
// directories: each row's verdict, where an accepted call lands, and whether that agrees with Go.
// The rows, the verdicts and the reasons are data: fixtures/go-os-root-cases.ts.
import { lstat, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ABS_PLACEHOLDER,
  GO_OS_ROOT_CASES,
  GO_ROOT_NAME,
  type GoRootCase,
  type GoVerdict,
  type KitVerdict,
} from "../fixtures/go-os-root-cases.js";
import { type FsModel, scanModel } from "../src/kit/audit/model-resolver.js";
import { type Tree, materialize } from "../src/kit/sandbox/tree.js";
import type { Tool } from "../src/gates/tool.js";
import { useSandbox } from "./support/sandbox.js";
import { describeEachToolSet } from "./support/tool-sets.js";
import { TOOL_SETS } from "../src/kit/sandbox/tool-sets.js";

// ROOT is a directory inside the sandbox's workspace, because Go's link texts (`../ROOT/target`)
// need the root to carry that name. The sandbox's canaries guard everything beside the workspace;
// the scans below guard the workspace around ROOT (its parent, which rows 4, 8, 12 and 13 reach).
const sandbox = useSandbox();

const TOOLS = ["read", "write"] as const;
type ToolName = (typeof TOOLS)[number];

const RUNS = GO_OS_ROOT_CASES.flatMap((goCase) =>
  TOOLS.map((tool) => ({ row: goCase.row, name: goCase.name, tool, goCase, answer: goCase[tool] })),
);

/** The row's tree under `<workspace>/ROOT`, in the form `materialize` lays out. */
function treeOf(goCase: GoRootCase, tool: ToolName, rootPath: string): Tree {
  const under = (at: string) => [GO_ROOT_NAME, ...at.split("/")];
  return [
    { kind: "dir", at: [GO_ROOT_NAME] },
    ...goCase.tree.map((entry) =>
      entry.kind === "dir"
        ? { kind: "dir" as const, at: under(entry.at) }
        : { kind: "symlink" as const, at: under(entry.at), target: { form: "text" as const, text: entry.text.replaceAll(ABS_PLACEHOLDER, rootPath) } },
    ),
    // materialize fills each file with text naming its own path, so content read back identifies the file.
    ...(tool === "read" ? goCase.readTargets.map((at) => ({ kind: "file" as const, at: under(at) })) : []),
  ];
}

/** Every entry under the workspace added, removed, or changed in type or link text, relative to it. */
function changesBetween(before: FsModel, after: FsModel): string[] {
  const shape = (model: FsModel, path: string) => JSON.stringify(model.nodes.get(path));
  const paths = new Set([...before.nodes.keys(), ...after.nodes.keys()]);
  return [...paths]
    .filter((path) => shape(before, path) !== shape(after, path))
    .map((path) => `${!before.nodes.has(path) ? "added" : !after.nodes.has(path) ? "removed" : "changed"} ${relative(before.base, path)}`)
    .sort();
}

/** What a successful write must add under the workspace: the file and any parent it had to make. */
function expectedAdditions(before: FsModel, lands: string): string[] {
  const parts = [GO_ROOT_NAME, ...lands.split("/")];
  return parts
    .map((_, index) => parts.slice(0, index + 1).join("/"))
    .filter((path) => !before.nodes.has(join(before.base, path)))
    .map((path) => `added ${path}`)
    .sort();
}

function agrees(go: GoVerdict, kit: KitVerdict): boolean {
  if (kit.verdict !== "accepted") return !go.accepts;
  return go.accepts && go.lands === kit.lands;
}

describe("Go os.Root's rootTestCases", () => {
  it("holds every row of Go's table, in Go's order", () => {
    expect(GO_OS_ROOT_CASES.map((goCase) => goCase.row)).toEqual(Array.from({ length: 25 }, (_, index) => index + 1));
  });

  it("names only tool sets of the registry where one answers differently", () => {
    const named = RUNS.flatMap(({ answer }) => Object.keys(answer.byToolSet ?? {}));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((name) => !TOOL_SETS.has(name))).toEqual([]);
  });

});

describeEachToolSet("Go os.Root's rootTestCases, row by row", (toolSet) => {
  it.each(RUNS)("row $row, $name: $tool", async ({ goCase, tool, answer: chapterAnswer }) => {
    const answer = chapterAnswer.byToolSet?.[toolSet.name] ?? chapterAnswer;
    const box = sandbox.current;
    const rootPath = join(box.root, GO_ROOT_NAME);
    const tree = treeOf(goCase, tool, rootPath);
    expect(await materialize(tree, box)).toEqual(tree);
    const [read, write] = toolSet.create(rootPath) as [Tool, Tool, Tool];
    const written = `written by ${tool} in row ${goCase.row}`;
    const before = await scanModel(box.root);

    const result = tool === "read" ? await read.execute({ path: goCase.path }) : await write.execute({ path: goCase.path, content: written });

    const changes = changesBetween(before, await scanModel(box.root));
    const { kit } = answer;
    if (kit.verdict === "accepted") {
      const landed = join(rootPath, kit.lands);
      if (tool === "read") {
        expect(result).toEqual({ content: await readFile(landed, "utf8") });
        expect(changes).toEqual([]);
      } else {
        expect(result).toEqual({ content: `wrote ${Buffer.byteLength(written)} bytes to ${goCase.path}` });
        expect(changes).toEqual(expectedAdditions(before, kit.lands));
        expect((await lstat(landed)).isFile()).toBe(true);
        expect(await readFile(landed, "utf8")).toBe(written);
      }
    } else {
      const message = kit.verdict === "escape" ? "path escapes workspace" : kit.message.replaceAll(ABS_PLACEHOLDER, rootPath);
      expect(result).toEqual({ content: `${tool}: ${message}`, isError: true });
      expect(changes).toEqual([]);
    }
    expect(answer.agreesWithGo).toBe(agrees(goCase.go, kit));
  });
});
