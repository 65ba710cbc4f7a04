// Peers' own test tables, replayed row by row against every tool set of the registry: Go's os.Root
// table and the official MCP filesystem server's boundary tests. Each row's answer is pinned per tool
// set, nothing may change outside the tools' root, and every disagreement with upstream carries its
// reason. The rows are data: src/kit/corpora/go-os-root.ts and mcp-filesystem.ts.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { GO_OS_ROOT } from "../src/kit/corpora/go-os-root.js";
import { MCP_FILESYSTEM } from "../src/kit/corpora/mcp-filesystem.js";
import { type CorpusRow, PINNED_TOOL_SETS, type TreeRow, agrees, lexicalAnswer, replayTree } from "../src/kit/corpora/corpus.js";
import { isInside } from "../src/gates/is-inside.js";
import { TOOL_SETS } from "../src/kit/sandbox/tool-sets.js";
import { corpusGo, corpusMcp } from "../src/kit/audit/properties/corpus.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget, referenceTarget } from "../src/kit/operations/target.js";
import { CORPORA_DOC, observeCorpora, renderCorporaDoc } from "../src/kit/corpora/doc.js";
import { LINUX_PROCFS, itNeeding } from "./support/platform.js";
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

  describe.each(PINNED_TOOL_SETS.map((name) => ({ name, createTools: TOOL_SETS.get(name)?.create })))("on the $name tools", ({ name, createTools }) => {
    const skip = name === "verified" && LINUX_PROCFS.missing;
    it.skipIf(skip).each(treeRows)("$id: $tool $path, $source.test", async (row) => {
      const pinned = row.kit[name];
      const replay = await replayTree(row, sandbox.current, createTools!);
      expect(replay.outcome).toEqual(pinned.outcome);
      expect(replay.outsideRoot, "nothing outside the tools' root changes").toEqual([]);
      const { outcome } = replay;
      // A refusal or a read changes nothing; a write changes its file and the directories it made for it.
      const made = outcome.verdict === "accepted" && row.tool === "write" ? outcome.lands.split("/").map((_, index, parts) => parts.slice(0, index + 1).join("/")) : [];
      expect(replay.changed.filter((path) => !made.includes(path)), "nothing else changes").toEqual([]);
      expect(made.length === 0 || replay.changed.includes(made.at(-1) ?? ""), "the written file is there").toBe(true);
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

describe("the corpora as audit properties", () => {
  it.each([corpusGo, corpusMcp])("$id passes the reference, in one deterministic run", async (property) => {
    const result = await runProperty(property, await referenceTarget(), { seed: 1, runs: 50 });
    expect(result, result.reason).toMatchObject({ status: "passed", runs: 1 });
  });

  it("fails the startsWith fork on the official server's own rows, each named with its source", async () => {
    const result = await runProperty(corpusMcp, await loadTarget("fixtures/vulnerable/similar-prefix.ts"), { seed: 1, runs: 50 });
    expect(result.status).toBe("failed");
    expect(result.reason).toContain(
      `fails the official MCP filesystem server's own sibling-paths case 2 [mcp-sibling-paths-2] ("rejects an existing sibling named allowed\"'\""; modelcontextprotocol/servers src/filesystem/__tests__/sibling-paths.test.ts @ 19d185b567ad): read "$ABS/allowed'/secret.txt" accepted allowed'/secret.txt; upstream or the kit: refused`,
    );
    expect(result.reason).toContain("path-validation case 5 [mcp-path-validation-5] (\"blocks similar directory names (prefix vulnerability)\"");
  });
});

itNeeding(LINUX_PROCFS, "docs/corpora.md is what a new replay of both corpora on both tool sets renders (npm run corpora-doc)", async () => {
  expect(await readFile(CORPORA_DOC, "utf8")).toBe(renderCorporaDoc(CORPORA, await observeCorpora(CORPORA, TOOL_SETS)));
});
