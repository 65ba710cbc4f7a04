/// <reference lib="dom" />
// `audit --html FILE` (issue 45): one self-contained page, opened in a real headless Chromium: it loads
// nothing, logs no error, and shows the verdict by consequence, the coverage, and every finding with
// its text, its tree drawn and its replay, all from the same JSON model the other reports render.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { failsRun } from "../src/kit/audit/reports/verdict.js";
import { cli, useScratch } from "./support/cli.js";
import { CHROMIUM, launchChromium } from "./support/browser.js";
import { describeNeeding } from "./support/platform.js";

const scratch = useScratch("workspace-gates-html-test-");

/** Audits whose failures cover the drawing: no link, a hardlink, links to a twin, a call that leaves, a known limit. */
const AUDITS = {
  // approval.refused: not applicable to a module without runAgent, so the page has a row to fold.
  prefix: ["fixtures/vulnerable/similar-prefix.ts", "--only", "isInside.posix,containment.read,containment.write,limits.hardlink,approval.refused"],
  listing: ["fixtures/surface/ls-stats-through-links.ts", "--only", "containment.list"],
} as const;

interface Opened {
  /** Every request the page made that is not its own file. */
  fetched: string[];
  /** Console errors and warnings, and uncaught errors. */
  complaints: string[];
  screenshot: Uint8Array;
  /** Per finding: its text, the entries whose links cross and the neighbours drawn, and the calls drawn leaving. */
  findings: Record<string, { text: string; crosses: string[]; neighbours: string[]; leaving: string[]; callsDrawn: CallDrawn[] }>;
  consequences: Record<string, { fails: string; others: string }>;
  coverage: string[];
  /** The results table's properties, the folded ones apart, and whether the fold is closed. */
  properties: { shown: string[]; folded: string[]; foldOpen: boolean | undefined };
  /** Each group of findings: its broken check, the findings under it, the paths it says they share. */
  groups: { gate: string; findings: string[]; shared: string[] }[];
  /** Per finding with a replay: the text its copy button copies. */
  copies: Record<string, string>;
}

/** A call drawn under the workspace: the text its lines spell, and whether every line fits its box. */
interface CallDrawn {
  text: string;
  fits: boolean;
}

let browser: Browser | undefined;
const pages: Record<string, { report: JsonReport; opened: Opened }> = {};

async function open(file: string): Promise<Opened> {
  const page = await (browser as Browser).newPage();
  const fetched: string[] = [];
  const complaints: string[] = [];
  page.on("request", (request) => {
    if (request.url() !== `file://${file}`) fetched.push(request.url());
  });
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warn") complaints.push(message.text());
  });
  page.on("pageerror", (error) => complaints.push(String(error)));
  try {
    await page.setViewport({ width: 1200, height: 900 });
    await page.goto(`file://${file}`, { waitUntil: "load" });
    const screenshot = await page.screenshot({ fullPage: true });
    const drawn = await page.evaluate(() => {
      const findings = Object.fromEntries(
        [...document.querySelectorAll<HTMLElement>("[data-finding]")].map((article) => [
          article.dataset.finding ?? "",
          {
            text: article.innerText,
            crosses: [...article.querySelectorAll("[data-crosses]")].map((link) => link.getAttribute("data-crosses") ?? ""),
            neighbours: [...article.querySelectorAll("[data-neighbour]")].map((box) => box.getAttribute("data-neighbour") ?? ""),
            leaving: [...article.querySelectorAll("[data-call-reaches]")].map((arrow) => arrow.getAttribute("data-call-reaches") ?? ""),
            callsDrawn: [...article.querySelectorAll("g[data-call]")].map((call) => {
              const box = call.querySelector("rect")?.getBBox();
              const lines = [...call.querySelectorAll<SVGTextContentElement>("text tspan")];
              const inside = (line: SVGTextContentElement) => {
                const drawn = line.getBBox();
                return box !== undefined && drawn.x >= box.x && drawn.x + drawn.width <= box.x + box.width && drawn.y >= box.y && drawn.y + drawn.height <= box.y + box.height;
              };
              return { text: lines.map((line) => line.textContent ?? "").join(""), fits: lines.length > 0 && lines.every(inside) };
            }),
          },
        ]),
      );
      const consequences = Object.fromEntries(
        [...document.querySelectorAll<HTMLTableRowElement>("[data-consequence]")].map((row) => [row.dataset.consequence ?? "", { fails: row.cells[3]?.innerText ?? "", others: row.cells[4]?.innerText ?? "" }]),
      );
      const coverage = [...document.querySelectorAll<HTMLTableRowElement>("#coverage tbody tr")].map((row) => row.cells[0]?.innerText ?? "");
      const fold = document.querySelector<HTMLDetailsElement>("#results details[data-folded]");
      const propertiesOf = (rows: NodeListOf<HTMLTableRowElement>) => [...rows].map((row) => row.cells[1]?.textContent ?? "");
      const properties = {
        shown: propertiesOf(document.querySelectorAll<HTMLTableRowElement>("#results > table tbody tr")),
        folded: propertiesOf(document.querySelectorAll<HTMLTableRowElement>("#results details tbody tr")),
        foldOpen: fold?.open,
      };
      const groups = [...document.querySelectorAll<HTMLElement>("[data-group]")].map((group) => ({
        gate: group.dataset.group ?? "",
        findings: [...group.querySelectorAll<HTMLElement>("[data-finding]")].map((article) => article.dataset.finding ?? ""),
        shared: JSON.parse(group.querySelector<HTMLElement>("[data-shared-paths]")?.dataset.sharedPaths ?? "[]") as string[],
      }));
      // What each copy button's own handler would copy: its handler run against a clipboard that records.
      const copies: Record<string, string> = {};
      for (const button of document.querySelectorAll<HTMLButtonElement>("button.copy")) {
        const id = button.closest<HTMLElement>("[data-finding]")?.dataset.finding ?? "";
        Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: (text: string) => ((copies[id] = text), Promise.resolve()) } });
        button.click();
      }
      return { findings, consequences, coverage, properties, groups, copies };
    });
    return { fetched, complaints, screenshot, ...drawn };
  } finally {
    await page.close();
  }
}

const words = (text: string) => text.replace(/\s+/g, " ").trim();

describe("audit --html", () => {
  it("refuses a file it cannot write before the run (exit 2, one line)", async () => {
    const { code, stdout, stderr } = await cli(["audit", "--only", "isInside.posix", "--html", join(scratch.path, "missing", "page.html")]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^audit: cannot write --html \S+page\.html: ENOENT[^\n]*\n$/);
  });

  it("is written by merge from the shards' JSON as by audit from one run, every failure on it", async () => {
    // One after the other, as CI's shards are separate processes: audits in one process share its
    // sandboxes, and one that ends removes those the other is still making (runner/property.ts).
    const shards: string[] = [];
    for (const index of [1, 2]) {
      const json = join(scratch.path, `shard-${index}.json`);
      await cli(["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "isInside.posix,isInside.win32", "--seed", "3", "--runs", "20", "--shard", `${index}/2`, "--json", json]);
      shards.push(json);
    }
    const [merged, html] = [join(scratch.path, "merged.json"), join(scratch.path, "merged.html")];
    await cli(["merge", ...shards, "--json", merged, "--html", html]);
    const report = JSON.parse(await readFile(merged, "utf8")) as JsonReport;
    const page = await readFile(html, "utf8");
    const failed = report.results.filter((result) => result.status === "failed");
    expect(failed.length).toBeGreaterThan(0);
    for (const result of failed) expect(page).toContain(`data-finding="${result.id}"`);
  });
});

describeNeeding(CHROMIUM, "the audit's page in a real browser", () => {
  beforeAll(async () => {
    browser = await launchChromium();
    for (const [name, argv] of Object.entries(AUDITS)) {
      const [json, html] = [join(scratch.path, `${name}.json`), resolve(scratch.path, `${name}.html`)];
      const { code } = await cli(["audit", ...argv, "--seed", "1", "--runs", "50", "--json", json, "--html", html]);
      expect(code).toBe(1);
      pages[name] = { report: JSON.parse(await readFile(json, "utf8")) as JsonReport, opened: await open(html) };
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("loads nothing but itself, logs no error, and renders a screenshot", () => {
    for (const { opened } of Object.values(pages)) {
      expect(opened.fetched).toEqual([]);
      expect(opened.complaints).toEqual([]);
      // A PNG, taller than the viewport: the whole page was drawn.
      expect([...opened.screenshot.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      expect(Buffer.from(opened.screenshot).readUInt32BE(20)).toBeGreaterThan(900);
    }
  });

  it("shows every finding's rule, consequence, threat, reason, calls and replay", () => {
    for (const { report, opened } of Object.values(pages)) {
      const failed = report.results.filter((result) => result.status === "failed");
      expect(Object.keys(opened.findings).sort()).toEqual(failed.map((result) => result.id).sort());
      for (const result of failed) {
        const shown = words(opened.findings[result.id]?.text ?? "");
        for (const text of [result.id, result.title, result.consequence ?? "", result.threat ?? "", result.reason ?? "", result.replay ?? "", ...(result.case?.calls ?? []).map((call) => call.call)])
          expect(shown, `${result.id}: ${text}`).toContain(words(text));
      }
    }
  });

  it("draws each link that crosses the boundary and each call that leaves, to the neighbour they reach", () => {
    let drawnLinks = 0;
    let drawnCalls = 0;
    for (const { report, opened } of Object.values(pages)) {
      for (const result of report.results.filter((failed) => failed.case?.workspace !== undefined)) {
        const drawn = opened.findings[result.id];
        const crossing = result.case?.workspace?.tree.filter((entry) => entry.crosses) ?? [];
        const leaving = result.case?.calls.filter((call) => call.reaches !== undefined) ?? [];
        expect(drawn?.crosses, result.id).toEqual(crossing.map((entry) => entry.path));
        expect(drawn?.leaving, result.id).toEqual(leaving.map((call) => call.reaches));
        for (const reached of [...crossing.map((entry) => entry.reaches), ...leaving.map((call) => call.reaches)]) expect(drawn?.neighbours, result.id).toContain(reached);
        drawnLinks += crossing.length;
        drawnCalls += leaving.length;
      }
    }
    // The audits above lay out links to a twin, a hardlink, and a read that leaves by ../ws-other.
    expect(drawnLinks).toBeGreaterThanOrEqual(2);
    expect(drawnCalls).toBeGreaterThanOrEqual(1);
  });

  it("draws each call that leaves whole, every line of it inside its box", () => {
    let long = 0;
    for (const { report, opened } of Object.values(pages)) {
      for (const result of report.results.filter((failed) => failed.case?.workspace !== undefined)) {
        const leaving = (result.case?.calls ?? []).flatMap((call, index) => (call.reaches === undefined ? [] : [`call ${index + 1}: ${call.call}`]));
        expect(opened.findings[result.id]?.callsDrawn.map((call) => call.text), result.id).toEqual(leaving);
        for (const call of opened.findings[result.id]?.callsDrawn ?? []) expect(call.fits, call.text).toBe(true);
        long += leaving.filter((text) => text.length > 50).length;
      }
    }
    // The page once cut a call at some 40 characters, before its path: the audits above draw longer ones.
    expect(long).toBeGreaterThanOrEqual(1);
  });

  it("gives the verdict by consequence, each failure where the --fail-on rule puts it, and every tool's coverage", () => {
    for (const { report, opened } of Object.values(pages)) {
      const failed = report.results.filter((result) => result.status === "failed");
      for (const result of failed) {
        const row = opened.consequences[result.consequence ?? ""];
        expect(failsRun(result, report) ? row?.fails : row?.others, result.id).toContain(result.id);
      }
      expect(opened.coverage).toEqual(report.coverage.map((row) => row.tool));
    }
  });

  it("folds the properties not applicable to the target under one closed line, and shows every other one", () => {
    const { report, opened } = pages.prefix as { report: JsonReport; opened: Opened };
    const notApplicable = report.results.filter((result) => result.status === "not-applicable").map((result) => result.id);
    expect(notApplicable).toContain("approval.refused");
    expect(opened.properties.folded).toEqual(notApplicable);
    expect(opened.properties.shown).toEqual(report.results.filter((result) => result.status !== "not-applicable").map((result) => result.id));
    expect(opened.properties.foldOpen).toBe(false);
  });

  it("groups the failures of one broken check under it, naming the counterexample paths they share", () => {
    for (const { report, opened } of Object.values(pages)) {
      const failed = report.results.filter((result) => result.status === "failed");
      const gates = [...new Set(failed.map((result) => result.gate))].filter((gate) => failed.filter((result) => result.gate === gate).length >= 2);
      expect(opened.groups.map((group) => group.gate)).toEqual(gates);
      for (const group of opened.groups) {
        expect(group.findings).toEqual(failed.filter((result) => result.gate === group.gate).map((result) => result.id));
        for (const path of group.shared) {
          const using = failed.filter((result) => group.findings.includes(result.id) && (result.case?.calls ?? []).some(({ call }) => call.includes(`path: ${JSON.stringify(path)}`)));
          expect(using.length, path).toBeGreaterThanOrEqual(2);
        }
      }
    }
    // containment.read, containment.write and limits.hardlink all break workspacePath.
    expect(pages.prefix?.opened.groups.find((group) => group.gate === "workspacePath")?.findings.length).toBeGreaterThanOrEqual(3);
  });

  it("gives each replay a button that copies exactly that replay", () => {
    for (const { report, opened } of Object.values(pages)) {
      const replays = Object.fromEntries(report.results.filter((result) => result.status === "failed" && result.replay !== undefined).map((result) => [result.id, result.replay]));
      expect(Object.keys(replays).length).toBeGreaterThan(0);
      expect(opened.copies).toEqual(replays);
    }
  });
});
