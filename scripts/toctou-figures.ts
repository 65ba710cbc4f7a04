// `npm run toctou:figures`: races each target once (`toctou --mode race`): the chapter's tools, the
// verified tools, the whole-surface fixture (a tool for every operation, on the chapter's boundary),
// and the official MCP filesystem server at the gallery's pinned version, installed from the npm
// registry into a temp project. Keeps the figures in docs/toctou-race.json and draws the table of
// docs/toctou.md from them. Takes RACE_SECONDS per target (more for the whole surface), and as much
// again for the control race that follows every target but the chapter's.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../src/kit/cli.js";
import { RACE_OPERATIONS, type RaceReport, raceOperationTool } from "../src/kit/toctou/race.js";
import { writeSectionToFile } from "../test/support/generated-section.js";
import { installOfficialServer } from "../test/support/official-server.js";
import { RACE_FIGURES_FILE, RACE_SECTION, type RaceFigures, raceRunFigures, renderRaceFigures } from "../test/support/race-figures.js";

const RACE_SECONDS = 10;
/** What the chapter's tools offer of the race: its read and write operations. */
const CHAPTER_OPERATIONS = RACE_OPERATIONS.filter((operation) => ["read", "write"].includes(raceOperationTool(operation))).length;
/**
 * The race's calls take the operations in turn, so in RACE_SECONDS each of the whole surface's
 * operations got 5/13 of the calls each of the chapter's got; with the faster check, one of them
 * (read.directory) then won none of its 869. It races until each has had about as many.
 */
const SURFACE_SECONDS = Math.ceil((RACE_SECONDS * RACE_OPERATIONS.length) / CHAPTER_OPERATIONS);

const dir = await mkdtemp(join(tmpdir(), "workspace-gates-figures-"));
process.stdout.write("installing the official MCP filesystem server from the registry\n");
const official = await installOfficialServer();
try {
  const targets: [string, number, string[]][] = [
    ["chapter", RACE_SECONDS, ["--tools", "chapter"]],
    ["verified", RACE_SECONDS, ["--tools", "verified"]],
    ["whole surface (fixtures/surface)", SURFACE_SECONDS, ["--target", "fixtures/surface/surface.ts"]],
    [`${official.name} (MCP)`, RACE_SECONDS, ["--mcp", "--", ...official.words]],
  ];
  const figures: RaceFigures = { machine: { node: process.version, cpus: cpus().length, loadAverage: loadavg()[0] ?? 0 }, runs: [] };
  for (const [name, seconds, target] of targets) {
    const json = join(dir, `${figures.runs.length}.json`);
    const code = await main(["toctou", "--mode", "race", "--seconds", String(seconds), "--json", json, ...target], {
      stdout: (text) => void process.stdout.write(text),
      stderr: (text) => void process.stderr.write(text),
    });
    if (code > 1) throw new Error(`toctou against ${name} could not run or was ineffective (exit ${code})`);
    figures.runs.push(raceRunFigures(JSON.parse(await readFile(json, "utf8")) as RaceReport, name));
  }
  await writeFile(RACE_FIGURES_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  await writeSectionToFile(RACE_SECTION, renderRaceFigures(figures));
  process.stdout.write(`wrote ${RACE_FIGURES_FILE} and the table in ${RACE_SECTION.file}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
  await official.remove();
}
