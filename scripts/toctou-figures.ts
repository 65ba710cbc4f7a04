// `npm run toctou:figures`: races each tool set once (`toctou --mode race`), keeps the figures in
// docs/toctou-race.json and draws the table of docs/toctou.md from them. Takes RACE_SECONDS per set.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../src/kit/cli.js";
import type { RaceReport } from "../src/kit/toctou/race.js";
import { writeSectionToFile } from "../test/support/generated-section.js";
import { RACE_FIGURES_FILE, RACE_SECTION, type RaceFigures, raceRunFigures, renderRaceFigures } from "../test/support/race-figures.js";

const RACE_SECONDS = 10;
const TOOL_SETS = ["chapter", "verified"];

const dir = await mkdtemp(join(tmpdir(), "workspace-gates-figures-"));
try {
  const figures: RaceFigures = { machine: { node: process.version, cpus: cpus().length, loadAverage: loadavg()[0] ?? 0 }, seconds: RACE_SECONDS, runs: [] };
  for (const tools of TOOL_SETS) {
    const json = join(dir, `${tools}.json`);
    const code = await main(["toctou", "--mode", "race", "--tools", tools, "--seconds", String(RACE_SECONDS), "--json", json], {
      stdout: (text) => void process.stdout.write(text),
      stderr: (text) => void process.stderr.write(text),
    });
    if (code > 1) throw new Error(`toctou --tools ${tools} could not run (exit ${code})`);
    figures.runs.push(raceRunFigures(JSON.parse(await readFile(json, "utf8")) as RaceReport));
  }
  await writeFile(RACE_FIGURES_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  await writeSectionToFile(RACE_SECTION, renderRaceFigures(figures));
  process.stdout.write(`wrote ${RACE_FIGURES_FILE} and the table in ${RACE_SECTION.file}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
