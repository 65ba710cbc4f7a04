// `npm run peers [-- NAME... | --render]`: installs the pinned packages of fixtures/peers/catalog.ts into a folder
// of their own ($TMPDIR/workspace-gates-peers), audits each (MCP servers with `audit --mcp`, helpers
// through their adapters), and writes each one's row into docs/peers.json and docs/peers.md as it
// finishes. With names, only those packages are audited again and the others keep their rows. Slow
// (minutes); needs the npm registry. `--render` only rewrites docs/peers.md from docs/peers.json (after a merge).
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { ADAPTERS_FOLDER, PEERS, type Peer } from "../fixtures/peers/catalog.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { RACE_OPERATIONS, type RaceReport, raceOperationTool } from "../src/kit/toctou/race.js";
import { main } from "../src/kit/cli.js";
import { PEERS_DATA_FILE, PEERS_PAGE_FILE, PEERS_VARIABLE, type PeerRace, type PeerRun, type PeersData, renderPeers } from "./peers-table.js";

const SEED = 1;
// containment.write takes a fifth of the runs: 100 trees of some thirty probes each.
const RUNS = 500;
const RACE_SECONDS = 5;
export const PEERS_FOLDER = join(tmpdir(), "workspace-gates-peers");

if (process.argv[2] === "--render") {
  await writeFile(PEERS_PAGE_FILE, renderPeers(JSON.parse(await readFile(PEERS_DATA_FILE, "utf8")) as PeersData));
  process.stdout.write(`wrote ${PEERS_PAGE_FILE}\n`);
  process.exit(0);
}
const only = process.argv.slice(2);
const unknown = only.filter((name) => !PEERS.some((peer) => peer.name === name));
if (unknown.length > 0) throw new Error(`no such peer: ${unknown.join(", ")}`);

await mkdir(PEERS_FOLDER, { recursive: true });
// The adapters import the installed packages by name, and their shared helper by a relative path.
await cp(ADAPTERS_FOLDER, join(PEERS_FOLDER, "adapters"), { recursive: true });
const dependencies = Object.fromEntries(PEERS.map((peer) => [peer.name, peer.version]));
await writeFile(join(PEERS_FOLDER, "package.json"), `${JSON.stringify({ private: true, type: "module", dependencies }, null, 2)}\n`);
process.stdout.write(`installing ${PEERS.length} packages into ${PEERS_FOLDER}\n`);
await promisify(execFile)("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: PEERS_FOLDER });

const reports = await mkdtemp(join(tmpdir(), "workspace-gates-peers-reports-"));
try {
  for (const [index, peer] of PEERS.entries())
    if (only.length === 0 || only.includes(peer.name)) await save(await audit(peer, join(reports, `${index}.json`)));
} finally {
  await rm(reports, { recursive: true, force: true });
}

/**
 * Writes `run` into docs/peers.json and docs/peers.md as soon as it is done, beside the rows the data
 * already holds for the catalog's other packages at their pinned versions: a package whose audit cannot
 * run (a server that does not start under load) loses no other package's row, and two runs with other
 * names can go side by side.
 */
async function save(run: PeerRun): Promise<void> {
  const previous = await readFile(PEERS_DATA_FILE, "utf8").then((text) => (JSON.parse(text) as PeersData).peers, () => []);
  const peers = PEERS.flatMap((peer) => (peer.name === run.name ? [run] : previous.filter((kept) => kept.name === peer.name && kept.version === peer.version)));
  const data: PeersData = { seed: SEED, runs: RUNS, raceSeconds: RACE_SECONDS, peers };
  await mkdir(dirname(PEERS_DATA_FILE), { recursive: true });
  await writeFile(PEERS_DATA_FILE, `${JSON.stringify(data, null, 2)}\n`);
  await writeFile(PEERS_PAGE_FILE, renderPeers(data));
  process.stdout.write(`wrote ${run.name} into ${PEERS_DATA_FILE} and ${PEERS_PAGE_FILE}\n`);
}

async function audit(peer: Peer, json: string): Promise<PeerRun> {
  const budget = peer.budget === undefined ? ["--runs", String(RUNS)] : "runs" in peer.budget ? ["--runs", String(peer.budget.runs)] : [];
  const common = ["audit", "--seed", String(SEED), ...budget, "--json", json];
  let argv: string[];
  if (peer.kind === "mcp") {
    const command = peer.command.map((word) => word.replaceAll("{install}", PEERS_FOLDER));
    argv = [...common, "--mcp", ...(peer.mapping === undefined ? [] : ["--mapping", peer.mapping]), "--", ...command];
  } else {
    argv = [...common, join(PEERS_FOLDER, "adapters", basename(peer.adapter)), "--only", peer.only.join(",")];
  }
  process.stdout.write(`${peer.name}@${peer.version}: workspace-gates ${argv.join(" ")}\n`);
  let stderr = "";
  const code = await main(argv, { stdout: () => {}, stderr: (text) => (stderr += text) });
  // A target too slow for its budget has a report, and a verdict of its own: no pass, no failure.
  const slow = stderr.split("\n").find((line) => line.startsWith("audit: the target is too slow to judge"));
  if (code === 2 && slow === undefined) {
    // The audit's last word on why (`audit: the MCP server failed during the audit, …`), without the machine's paths.
    const unaudited = portable(stderr.split("\n").filter((line) => line.startsWith("audit: ")).at(-1) ?? stderr.trim());
    process.stdout.write(`  could not be audited: ${unaudited}\n`);
    process.exitCode = 1;
    return { name: peer.name, version: peer.version, kind: peer.kind, unaudited, coverage: [], results: [] };
  }
  const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
  const failed = report.results.filter((result) => result.status === "failed").map((result) => result.id);
  process.stdout.write(`  fails: ${failed.join(", ") || "nothing"}\n`);
  const inapplicable = peer.kind === "helper" ? Object.entries(peer.notApplicable) : [];
  return {
    name: peer.name,
    version: peer.version,
    kind: peer.kind,
    ...(peer.budget === undefined ? {} : { budget: peer.budget }),
    ...(slow === undefined ? {} : { verdict: portable(slow.slice("audit: ".length)) }),
    ...(report.time === undefined || peer.budget === undefined || "runs" in peer.budget ? {} : { time: report.time }),
    ...(peer.kind === "mcp" ? { race: await race(argv.slice(argv.indexOf("--mcp")), `${json}.race.json`) } : {}),
    coverage: report.coverage.map((row) => ({ ...row, why: portable(row.why) })),
    results: [
      ...report.results.map(({ id, kind, status, calls, reason, consequence, threat, counterexample, replay }) => ({
        id,
        kind,
        status,
        calls,
        ...(reason === undefined ? {} : { reason: portable(reason) }),
        ...(consequence === undefined ? {} : { consequence }),
        ...(threat === undefined ? {} : { threat }),
        ...(counterexample === undefined ? {} : { counterexample: portable(counterexample) }),
        ...(replay === undefined ? {} : { replay: portable(replay) }),
      })),
      ...inapplicable.map(([id, reason]) => ({ id, kind: "guarantee" as const, status: "not-applicable" as const, calls: {}, reason })),
    ],
  };
}

/** The gallery folder as `$PEERS`, so the committed data holds no path of the machine that ran it. */
function portable(text: string): string {
  return text.replaceAll(PEERS_FOLDER, PEERS_VARIABLE);
}

/** `toctou --mcp` on the same server, with `target` the `--mcp [--mapping F] -- COMMAND` words. */
async function race(target: string[], json: string): Promise<PeerRace> {
  const exitCode = await main(["toctou", "--seconds", String(RACE_SECONDS), "--json", json, ...target], { stdout: () => {}, stderr: () => {} });
  const report = JSON.parse(await readFile(json, "utf8")) as RaceReport;
  const writes = RACE_OPERATIONS.filter((operation) => raceOperationTool(operation) === "write").map((operation) => report.perOperation[operation]);
  const writeCalls = writes.reduce((sum, tally) => sum + (tally?.attempts ?? 0), 0);
  const writeEscapes = writes.reduce((sum, tally) => sum + (tally?.escapes ?? 0), 0);
  process.stdout.write(`  race: ${writeEscapes} write escapes in ${writeCalls} calls, exit ${exitCode}\n`);
  return { writeCalls, writeEscapes, swaps: report.racer.swaps, exitCode };
}
