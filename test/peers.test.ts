// The gallery of real packages: docs/peers.md is the page generated from docs/peers.json, and the
// data holds every catalogued package, its findings' counterexamples and replays, and its race.
import { access, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { PEERS } from "../fixtures/peers/catalog.js";
import { PEERS_DATA_FILE, PEERS_PAGE_FILE, type PeersData, renderPeers } from "../scripts/peers-table.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { CONSEQUENCES, THREATS } from "../src/kit/findings/findings.js";
import { readMapping } from "../src/kit/mcp/mapping.js";
import { twinOf } from "./support/official-seeds.js";

const data = JSON.parse(await readFile(PEERS_DATA_FILE, "utf8")) as PeersData;

describe("the gallery of real packages (docs/peers.md)", () => {
  it("is the page generated from the data the last run wrote", async () => {
    expect(await readFile(PEERS_PAGE_FILE, "utf8")).toBe(renderPeers(data));
  });

  it("holds a run of every catalogued package, at its pinned version, twelve at least", () => {
    expect(data.peers.map((run) => `${run.name}@${run.version}`)).toEqual(PEERS.map((peer) => `${peer.name}@${peer.version}`));
    expect(PEERS.length).toBeGreaterThanOrEqual(12);
    expect(PEERS.filter((peer) => peer.kind === "mcp").map((peer) => peer.name)).toEqual(
      expect.arrayContaining(["@modelcontextprotocol/server-filesystem", "@agent-infra/mcp-server-filesystem", "mcp-server-filesystem"]),
    );
  });

  it("holds no temp path of the run that wrote it: sandboxes are $BOX, the gallery folder $PEERS", async () => {
    expect(await readFile(PEERS_DATA_FILE, "utf8")).not.toMatch(/\/(?:tmp|dev\/shm|var\/folders)\//);
  });

  it("gives every failure its counterexample and replay, and every inapplicable property its reason", () => {
    for (const run of data.peers)
      for (const result of run.results) {
        if (result.status === "failed") expect(result, `${run.name} ${result.id}`).toMatchObject({ counterexample: expect.any(String), replay: expect.any(String) });
        if (result.status === "not-applicable") expect(result.reason, `${run.name} ${result.id}`).toMatch(/\w{4,}/);
      }
  });

  it("states what every failure costs and what it needs, as the audit's reports do", () => {
    for (const run of data.peers)
      for (const result of run.results)
        if (result.status === "failed") {
          expect(Object.keys(CONSEQUENCES), `${run.name} ${result.id}`).toContain(result.consequence);
          expect(Object.keys(THREATS), `${run.name} ${result.id}`).toContain(result.threat);
        }
  });

  it("classifies every failed guarantee from the package's source: no finding is published without its class", () => {
    for (const run of data.peers) {
      const peer = PEERS.find((candidate) => candidate.name === run.name);
      for (const result of run.results)
        if (result.kind === "guarantee" && result.status === "failed") expect(peer?.classes[result.id], `${run.name} ${result.id}`).toMatch(/\w{4,}/);
    }
  });

  it("names every audited package that fails no guarantee a negative control, and no other", async () => {
    const controls = (await readFile(PEERS_PAGE_FILE, "utf8")).split("## Negative controls")[1]?.split("## Findings")[0] ?? "";
    for (const run of data.peers) {
      const fails = run.results.some((result) => result.kind === "guarantee" && result.status === "failed");
      expect(controls.includes(`- \`${run.name}\` ${run.version}: holds`), run.name).toBe(!fails && run.unaudited === undefined);
    }
  });

  it("lists every tool of every MCP server, with what it was taken for and a verdict the page shows", async () => {
    const page = await readFile(PEERS_PAGE_FILE, "utf8");
    for (const run of data.peers.filter((candidate) => candidate.kind === "mcp" && candidate.unaudited === undefined)) {
      expect(run.coverage.length, run.name).toBeGreaterThan(0);
      for (const row of run.coverage) expect(page, `${run.name} ${row.tool}`).toContain(`| \`${row.tool}\` | ${row.plays}`);
    }
  });

  it("reports the official filesystem server's quote and whitespace sibling escape", () => {
    const official = data.peers.find((run) => run.name === "@modelcontextprotocol/server-filesystem");
    const write = official?.results.find((result) => result.id === "containment.write");
    expect(write?.status).toBe("failed");
    // The twin its one link reaches is the quote or the space twin (the name, not its number, which the order of twins decides).
    expect(twinOf(write)).toMatch(/['\s]$/);
    expect(write?.replay).toMatch(/^npx workspace-gates audit --mcp --only containment\.write --seed \d+ --path \S+ -- node \S+server-filesystem\/dist\/index\.js '\{root\}'$/);
  });

  it("races every MCP server (and no helper, which has no tools), with a racer that swapped", () => {
    for (const run of data.peers) {
      if (run.kind === "helper" || run.unaudited !== undefined) expect(run.race, run.name).toBeUndefined();
      else expect(run.race?.swaps, run.name).toBeGreaterThan(0);
    }
    const official = data.peers.find((run) => run.name === "@modelcontextprotocol/server-filesystem");
    expect(official?.race).toMatchObject({ exitCode: 1, writeEscapes: expect.any(Number) });
    expect(official?.race?.writeEscapes).toBeGreaterThan(0);
  });

  it("names only real properties, existing adapters and valid mappings in the catalog", async () => {
    const ids = new Set(PROPERTIES.map((property) => property.id));
    for (const peer of PEERS) {
      for (const id of Object.keys(peer.classes)) expect(ids, `${peer.name}: ${id}`).toContain(id);
      if (peer.kind === "helper") {
        await access(peer.adapter);
        for (const id of [...peer.only, ...Object.keys(peer.notApplicable)]) expect(ids, `${peer.name}: ${id}`).toContain(id);
      } else if (peer.mapping !== undefined) await readMapping(peer.mapping);
    }
  });
});
