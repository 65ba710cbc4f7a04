// Every figure in docs/ comes from a script: each generated table equals what its script draws from
// the committed figures, those figures say what the docs claim, and no tracked text file holds a
// machine path or a six-figure line count of generated state, and every link between the pages resolves.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { BENCH_FILE, BENCH_SECTION, type BenchFigures, renderBench } from "./support/bench-table.js";
import { readSectionFromFile, wrapSection } from "./support/generated-section.js";
import { OFFICIAL_SEEDS_FILE, OFFICIAL_SEEDS_SECTION, type OfficialSeeds, WATCHED, renderOfficialSeeds } from "./support/official-seeds.js";
import { RACE_FIGURES_FILE, RACE_SECTION, type RaceFigures, renderRaceFigures } from "./support/race-figures.js";
import { RACE_OPERATIONS, type RaceOperation, raceOperationTool } from "../src/kit/toctou/race.js";

const json = async <T>(path: string) => JSON.parse(await readFile(path, "utf8")) as T;

describe("docs/toctou.md: the race figures", () => {
  it("shows exactly the committed figures", async () => {
    expect(await readSectionFromFile(RACE_SECTION)).toBe(wrapSection(RACE_SECTION, renderRaceFigures(await json<RaceFigures>(RACE_FIGURES_FILE))));
  });

  it("were measured on the four targets the page compares, and say what it says of each", async () => {
    const { runs } = await json<RaceFigures>(RACE_FIGURES_FILE);
    const [chapter, verified, surface, server] = runs;
    expect(runs.map((run) => run.tools)).toEqual(["chapter", "verified", "whole surface (fixtures/surface)", expect.stringMatching(/^@modelcontextprotocol\/server-filesystem \S+ \(MCP\)$/)]);
    const escapes = (run: RaceFigures["runs"][number] | undefined, operation: RaceOperation) => run?.operations[operation]?.escapes;
    const readsAndWrites = RACE_OPERATIONS.filter((operation) => ["read", "write"].includes(raceOperationTool(operation)));
    // The chapter's tools read and write, and every one of those operations escaped; outside are files and the overwritten canary.
    expect(Object.keys(chapter?.operations ?? {})).toEqual(readsAndWrites);
    for (const operation of readsAndWrites) expect(escapes(chapter, operation), operation).toBeGreaterThan(0);
    expect(chapter?.sideEffects).toMatchObject({ emptyFiles: 0, directories: 0, other: 1 });
    // The verified tools: nothing, anywhere, in as long a race as the chapter's.
    expect(Object.keys(verified?.operations ?? {})).toEqual(readsAndWrites);
    for (const operation of readsAndWrites) expect(escapes(verified, operation), operation).toBe(0);
    expect(verified?.sideEffects).toEqual({ filesWithContent: 0, emptyFiles: 0, directories: 0, other: 0 });
    expect(verified?.seconds).toBe(chapter?.seconds);
    // The whole surface on the chapter's boundary: every operation escaped but the edit through a leaf
    // (it renames a temporary file over the name, which replaces the link).
    expect(Object.keys(surface?.operations ?? {})).toEqual([...RACE_OPERATIONS]);
    for (const operation of RACE_OPERATIONS) expect(escapes(surface, operation) ?? 0, operation).toSatisfy((count: number) => (operation === "edit.leaf" ? count === 0 : count > 0));
    // The official server: a directory swap wins for new files and directories, moves at both ends,
    // edits and listings; a leaf swap does not win its writes or edits (it renames a temporary file
    // over the name it resolved).
    for (const operation of ["write.directory", "mkdir.directory", "move.source", "move.destination", "edit.directory", "list.directory"] as const)
      expect(escapes(server, operation), operation).toBeGreaterThan(0);
    expect(escapes(server, "overwrite.leaf")).toBe(0);
    expect(escapes(server, "edit.leaf")).toBe(0);
  });
});

describe("docs/audit-budget.md: the official server, seed by seed", () => {
  it("shows exactly the committed figures", async () => {
    expect(await readSectionFromFile(OFFICIAL_SEEDS_SECTION)).toBe(wrapSection(OFFICIAL_SEEDS_SECTION, renderOfficialSeeds(await json<OfficialSeeds>(OFFICIAL_SEEDS_FILE))));
  });

  it("were measured for seeds 1 to 20, each a failed audit whose write reached the quote or space twin", async () => {
    const { server, rows } = await json<OfficialSeeds>(OFFICIAL_SEEDS_FILE);
    expect(server).toMatch(/^@modelcontextprotocol\/server-filesystem \S+$/);
    expect(rows.map((row) => row.seed)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    for (const row of rows) {
      expect(row, `seed ${row.seed}`).toMatchObject({ exitCode: 1, status: "failed" });
      expect(row.failed, `seed ${row.seed}`).toContain(WATCHED);
      expect(row.twin, `seed ${row.seed}`).toMatch(/['\s]$/);
    }
  });
});

describe("docs/bench.md: the cost of the gates", () => {
  it("shows exactly the committed figures, and says on what machine", async () => {
    const figures = await json<BenchFigures>(BENCH_FILE);
    expect(figures.rows.length).toBeGreaterThan(0);
    expect(await readSectionFromFile(BENCH_SECTION)).toBe(wrapSection(BENCH_SECTION, renderBench(figures)));
  });
});

describe("generated state stays out of the repository", () => {
  const tracked = execFileSync("git", ["ls-files", "-z"], { encoding: "utf8" }).split("\0").filter((file) => file !== "");
  const TEXT = /\.(ts|mts|mjs|js|json|md|yml|yaml|svg)$|^\.ci\/run$|^\.gitignore$/;

  // Tests may spell made-up absolute paths (`/home/u/project`) as inputs; they must not hold this
  // machine's, and nothing else may hold any path under a home or work directory.
  it("no tracked text file holds an absolute path of a development machine, or 100 000 lines", async () => {
    const machinePath = /\/(?:work|home|Users|root)\/[\w.-]+\//;
    const thisMachine = `${process.cwd()}/`;
    const found: string[] = [];
    for (const file of tracked.filter((candidate) => TEXT.test(candidate))) {
      const text = await readFile(file, "utf8").catch(() => "");
      const match = file.startsWith("test/") ? (text.includes(thisMachine) ? [thisMachine] : null) : machinePath.exec(text);
      if (match !== null) found.push(`${file}: ${match[0]}`);
      if (text.split("\n").length >= 100_000) found.push(`${file}: ${text.split("\n").length} lines`);
    }
    expect(found).toEqual([]);
  });
});

describe("SECURITY.md's claims", () => {
  // A merge once left one claim with no evidence cell and the next with two: GitHub drops the extra
  // cell, so the first claim showed no test at all.
  it("each row of the claims table is one claim and its evidence, both given", async () => {
    const lines = (await readFile("SECURITY.md", "utf8")).split("\n");
    const start = lines.indexOf("| claim | evidence (test) |");
    expect(start).toBeGreaterThan(-1);
    const after = lines.slice(start + 2);
    const end = after.findIndex((line) => !line.startsWith("|"));
    const rows = end === -1 ? after : after.slice(0, end);
    expect(rows.length).toBeGreaterThan(10);
    const malformed = rows.filter((row) => {
      const cells = row.slice(1, -1).split(" | ");
      return !row.endsWith(" |") || cells.length !== 2 || cells.some((cell) => cell.trim() === "");
    });
    expect(malformed.map((row) => row.slice(0, 80))).toEqual([]);
  });
});

describe("the documentation's links", () => {
  it("every relative link in README.md, SECURITY.md and docs/ names a file that exists", async () => {
    const pages = ["README.md", "SECURITY.md", ...(await readdir("docs", { recursive: true })).filter((file) => file.endsWith(".md")).map((file) => join("docs", file))];
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target = ""] of (await readFile(page, "utf8")).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(join(dirname(page), target))) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("no page the package ships links to a file its package.json leaves out (an installed README would point at nothing)", async () => {
    const { files } = JSON.parse(await readFile("package.json", "utf8")) as { files: string[] };
    const glob = (pattern: string) => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", "[^/]*")}$`);
    const left = files.filter((entry) => entry.startsWith("!")).map((entry) => glob(entry.slice(1)));
    expect(left.length, "package.json leaves something out, which this test is about").toBeGreaterThan(0);
    const shipped = (file: string) => !left.some((pattern) => pattern.test(file));
    const pages = ["README.md", "SECURITY.md", ...(await readdir("docs", { recursive: true })).filter((file) => file.endsWith(".md")).map((file) => join("docs", file))].filter(shipped);
    const pointing: string[] = [];
    for (const page of pages) {
      for (const [, target = ""] of (await readFile(page, "utf8")).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const file = relative(".", join(dirname(page), target));
        if (!shipped(file)) pointing.push(`${page}: ${target}`);
      }
    }
    expect(pointing).toEqual([]);
  });
});
