// Peers' own test tables, replayed row by row against every tool set of the registry: Go's os.Root
// table and the official MCP filesystem server's boundary tests. Each row's answer is pinned per tool
// set, nothing may change outside the tools' root, and every disagreement with upstream carries its
// reason. The rows are data: fixtures/corpora/.
import { describe, expect, it } from "vitest";
import { GO_OS_ROOT } from "../fixtures/corpora/go-os-root.js";
import { MCP_FILESYSTEM } from "../fixtures/corpora/mcp-filesystem.js";
import { type CorpusRow, PINNED_TOOL_SETS, type TreeRow, agrees, lexicalAnswer, replayTree } from "../src/kit/corpora/corpus.js";
import { isInside } from "../src/gates/is-inside.js";
import { TOOL_SETS } from "../src/kit/sandbox/tool-sets.js";
import { LINUX_PROCFS } from "./support/platform.js";
import { useSandbox } from "./support/sandbox.js";

const sandbox = useSandbox();
const CORPORA = [GO_OS_ROOT, MCP_FILESYSTEM];

const differs = (row: CorpusRow, answer: Parameters<typeof agrees>[1]) => !agrees(row, answer);

describe.each(CORPORA)("corpus $id", (corpus) => {
  const treeRows = corpus.rows.filter((row): row is TreeRow => row.kind === "tree");

  it("has unique row ids, numbered per source file in order", () => {
    expect(new Set(corpus.rows.map((row) => row.id)).size).toBe(corpus.rows.length);
    for (const file of new Set(corpus.rows.map((row) => row.source.file))) {
      const cases = corpus.rows.filter((row) => row.source.file === file).map((row) => row.case);
      expect(cases, file).toEqual([...cases].sort((a, b) => a - b));
    }
  });

  it.each(corpus.rows.filter((row) => row.kind === "lexical"))("$id: isInside, $source.test", (row) => {
    expect(lexicalAnswer(row, isInside)).toBe(row.kit);
    expect(row.difference !== undefined, "a reason exactly where the kit disagrees").toBe(differs(row, row.kit));
  });

  describe.each(PINNED_TOOL_SETS.map((name) => ({ name, createTools: TOOL_SETS.get(name) })))("on the $name tools", ({ name, createTools }) => {
    const skip = name === "verified" && LINUX_PROCFS.missing;
    it.skipIf(skip).each(treeRows)("$id: $tool $path, $source.test", async (row) => {
      const pinned = row.kit[name];
      const replay = await replayTree(row, sandbox.current, createTools!);
      expect(replay.outcome).toEqual(pinned.outcome);
      expect(replay.outsideRoot, "nothing outside the tools' root changes").toEqual([]);
      expect(pinned.difference !== undefined, "a reason exactly where the kit disagrees").toBe(differs(row, pinned.outcome));
    });
  });
});

it("holds every row of Go's table, in Go's order, for read and for write", () => {
  expect(GO_OS_ROOT.rows.map((row) => row.id)).toEqual(Array.from({ length: 50 }, (_, index) => `go-${(index >> 1) + 1}-${index % 2 === 0 ? "read" : "write"}`));
});

it("pins every tree row for exactly the tool sets of the registry", () => {
  expect([...TOOL_SETS.keys()].sort()).toEqual([...PINNED_TOOL_SETS].sort());
});
