/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// `toctou --svg`: the timeline drawn from the run's own events, opened in a real headless Chromium
// (shipped inside the @sparticuz/chromium package, so nothing is downloaded), and the pictures in
// docs/toctou.md, which must show what a fresh run shows.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, expect } from "vitest";
import type { DeterministicReport } from "../src/kit/toctou/deterministic.js";
import { main } from "../src/kit/cli.js";
import { LINUX_PROCFS, describeNeeding, itNeeding } from "./support/platform.js";
import { CHROMIUM, launchChromium } from "./support/browser.js";

/** What the browser makes of a timeline: per lane its tool, outcome and the marks' x in drawing order. */
interface Drawn {
  title: string;
  lanes: { tool: string; outcome: string; marks: { step: string; x: number }[]; verdict: string }[];
  /** Elements whose box lies outside the picture, and pairs of labels that overlap. */
  offCanvas: string[];
  overlaps: string[];
}

let browser: Browser | undefined;
let dir = "";

async function openSvg(file: string): Promise<Drawn> {
  if (browser === undefined) throw new Error("no browser");
  const page = await browser.newPage();
  try {
    await page.goto(`file://${resolve(file)}`);
    return await page.evaluate(() => {
      const svg = document.documentElement as unknown as SVGSVGElement;
      const view = svg.viewBox.baseVal;
      const box = (element: Element) => (element as SVGGraphicsElement).getBBox();
      const offCanvas = [...svg.querySelectorAll("text, circle, rect, line")]
        .filter((element) => {
          const b = box(element);
          return b.x < view.x || b.y < view.y || b.x + b.width > view.x + view.width || b.y + b.height > view.y + view.height;
        })
        .map((element) => element.outerHTML.slice(0, 80));
      const lanes = [...svg.querySelectorAll("g[data-tool]")].map((lane) => {
        const labels = [...lane.querySelectorAll("text")].map((text) => ({ text: text.textContent ?? "", b: box(text) }));
        const overlaps = labels.flatMap((a, i) =>
          labels.slice(i + 1).filter(({ b }) => a.b.x < b.x + b.width && b.x < a.b.x + a.b.width && a.b.y < b.y + b.height && b.y < a.b.y + a.b.height).map((b) => `${a.text} / ${b.text}`),
        );
        return {
          tool: lane.getAttribute("data-tool") ?? "",
          outcome: lane.getAttribute("data-outcome") ?? "",
          marks: [...lane.querySelectorAll("circle[data-step]")].map((mark) => ({ step: mark.getAttribute("data-step") ?? "", x: Number(mark.getAttribute("cx")) })),
          verdict: lane.querySelector("[data-verdict]")?.textContent ?? "",
          overlaps,
        };
      });
      return {
        title: svg.querySelector("title")?.textContent ?? "",
        lanes: lanes.map(({ overlaps: _, ...lane }) => lane),
        offCanvas,
        overlaps: lanes.flatMap((lane) => lane.overlaps),
      };
    });
  } finally {
    await page.close();
  }
}

async function toctou(args: readonly string[]): Promise<number> {
  return main(["toctou", ...args], { stdout: () => undefined, stderr: () => undefined });
}

function expectLegible(drawn: Drawn): void {
  expect(drawn.offCanvas, "drawn outside the picture").toEqual([]);
  expect(drawn.overlaps, "labels drawn over each other").toEqual([]);
}

describeNeeding(CHROMIUM, "the TOCTOU timeline in a real browser", () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "workspace-gates-svg-"));
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await rm(dir, { recursive: true, force: true });
  });

  itNeeding(LINUX_PROCFS, "draws each tool call's check, swap and answer in the order and at the times the run recorded", async () => {
    for (const [tools, exit] of [["chapter", 1], ["verified", 0]] as const) {
      const svg = join(dir, `${tools}.svg`);
      const json = join(dir, `${tools}.json`);
      expect(await toctou(["--tools", tools, "--svg", svg, "--json", json])).toBe(exit);
      const report = JSON.parse(await readFile(json, "utf8")) as DeterministicReport;
      const drawn = await openSvg(svg);
      expect(drawn.lanes.map((lane) => [lane.tool, lane.outcome])).toEqual(report.scenarios.map((scenario) => [scenario.tool, scenario.outcome]));
      for (const [index, lane] of drawn.lanes.entries()) {
        const timeline = report.scenarios[index]?.timeline ?? [];
        expect(lane.marks.map((mark) => mark.step)).toEqual(["call", "check", "swap", "answer"]);
        expect(timeline.map((event) => event.step)).toEqual(["call", "check", "swap", "answer"]);
        const xs = lane.marks.map((mark) => mark.x);
        expect(xs, "marks out of time order").toEqual([...xs].sort((a, b) => a - b));
        // One scale for the whole picture: x is linear in the recorded time.
        const [first, last] = [timeline[0], timeline.at(-1)];
        const slope = (xs[3]! - xs[0]!) / (last!.atMs - first!.atMs);
        for (const [step, event] of timeline.entries()) expect(xs[step]).toBeCloseTo(xs[0]! + slope * (event.atMs - first!.atMs), 3);
      }
      expectLegible(drawn);
    }
  }, 120_000);

  itNeeding(LINUX_PROCFS, "docs/toctou.md shows pictures that say what a fresh run says: the chapter's tools escape, the verified tools do not", async () => {
    const page = await readFile("docs/toctou.md", "utf8");
    for (const [tools, outcome] of [["chapter", "escaped"], ["verified", "contained"]] as const) {
      expect(page).toContain(`(toctou-${tools}.svg)`);
      const fresh = join(dir, `fresh-${tools}.json`);
      await toctou(["--tools", tools, "--json", fresh]);
      const report = JSON.parse(await readFile(fresh, "utf8")) as DeterministicReport;
      const drawn = await openSvg(`docs/toctou-${tools}.svg`);
      expect(report.scenarios.map((scenario) => scenario.outcome)).toEqual(["read", "write"].map(() => outcome));
      expect(drawn.lanes.map((lane) => [lane.tool, lane.outcome])).toEqual(report.scenarios.map((scenario) => [scenario.tool, scenario.outcome]));
      expect(drawn.title).toContain(`the ${tools} tools`);
      expectLegible(drawn);
    }
  }, 120_000);
});
