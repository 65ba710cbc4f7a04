// `toctou --png`: the same picture as `--svg`, as a PNG twice its size with its words drawn, from
// @resvg/resvg-js; and the clear refusals when the renderer or a font is missing.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/kit/cli.js";
import { UsageError } from "../src/kit/cli-command.js";
import { PNG_SCALE, PictureUnavailable, SANS_SERIF_FAMILIES, type LoadRenderer, pngRenderer, sansSerifFamily } from "../src/kit/picture/png.js";
import { parseToctouFlags } from "../src/kit/toctou/flags.js";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let dir = "";

async function toctou(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(["toctou", ...args], { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}

/** The width and height an SVG root element declares. */
function svgSize(svg: string): { width: number; height: number } {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? "";
  return { width: Number(/\bwidth="(\d+)"/.exec(root)?.[1]), height: Number(/\bheight="(\d+)"/.exec(root)?.[1]) };
}

/** The PNG's own header: its signature, then IHDR's width and height. */
function pngHeader(png: Buffer): { signature: Buffer; chunk: string; width: number; height: number } {
  return { signature: png.subarray(0, 8), chunk: png.subarray(12, 16).toString("latin1"), width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** The RGBA pixels of a PNG file, decoded by placing it, unscaled, as the only image of an SVG. */
function decode(png: Buffer): Buffer {
  const { width, height } = pngHeader(png);
  const frame = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}"><image width="${width}" height="${height}" xlink:href="data:image/png;base64,${png.toString("base64")}"/></svg>`;
  return new Resvg(frame, { background: "white" }).render().pixels;
}

/** Pixels that differ between two equal-sized RGBA images, in the rows from `top` to `bottom`. */
function differingPixels(a: Buffer, b: Buffer, width: number, top: number, bottom: number): number {
  let count = 0;
  for (let offset = top * width * 4; offset < bottom * width * 4; offset += 4) if (a.readUInt32BE(offset) !== b.readUInt32BE(offset)) count += 1;
  return count;
}

/** Pixels that are not white in the columns from `left` to `right`, over the whole height. */
function inkInColumns(pixels: Buffer, width: number, left: number, right: number): number {
  let count = 0;
  for (let row = 0; row < pixels.length / 4 / width; row += 1)
    for (let column = left; column < right; column += 1) if (pixels.readUInt32BE((row * width + column) * 4) !== 0xffffffff) count += 1;
  return count;
}

/** The same picture drawn with every word taken out, at the PNG's scale: what a PNG with no text would be. */
function wordless(svg: string): Buffer {
  const bare = svg.replace(/<text\b[^>]*>[\s\S]*?<\/text>/g, "");
  return new Resvg(bare, { background: "white", fitTo: { mode: "zoom", value: PNG_SCALE }, font: { loadSystemFonts: true } }).render().pixels;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "workspace-gates-png-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("toctou --png", () => {
  it("draws the deterministic timeline as a PNG twice the SVG's size, its title and lanes in words", { timeout: 60_000 }, async () => {
    const [svgFile, pngFile] = [join(dir, "timeline.svg"), join(dir, "timeline.png")];
    const run = await toctou(["--tools", "chapter", "--svg", svgFile, "--png", pngFile]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain(`timeline written to ${pngFile}\n`);
    const [svg, png] = [await readFile(svgFile, "utf8"), await readFile(pngFile)];
    const size = svgSize(svg);
    expect(size.width).toBeGreaterThan(100);
    expect(pngHeader(png)).toEqual({ signature: PNG_SIGNATURE, chunk: "IHDR", width: 2 * size.width, height: 2 * size.height });
    // The title is the only thing in the top 30 units of the picture: without words that band is blank.
    const pixels = decode(png);
    expect(differingPixels(pixels, wordless(svg), 2 * size.width, 0, 2 * 30)).toBeGreaterThan(300);
  });

  it("draws the race's escapes over time as the same PNG, also without --svg", { timeout: 60_000 }, async () => {
    const pngFile = join(dir, "race.png");
    const run = await toctou(["--mode", "race", "--tools", "chapter", "--attempts", "60", "--png", pngFile]);
    expect(run.stdout).toContain(`escapes over time drawn to ${pngFile}\n`);
    const png = await readFile(pngFile);
    const { signature, width, height } = pngHeader(png);
    expect(signature).toEqual(PNG_SIGNATURE);
    // The race's picture has a fixed size: its text is drawn in the title band as in the timeline's.
    const svgFile = join(dir, "race.svg");
    await toctou(["--mode", "race", "--tools", "chapter", "--attempts", "60", "--svg", svgFile]);
    const svg = await readFile(svgFile, "utf8");
    expect({ width, height }).toEqual({ width: 2 * svgSize(svg).width, height: 2 * svgSize(svg).height });
    expect(differingPixels(decode(png), wordless(svg), width, 0, 2 * 30)).toBeGreaterThan(300);
    // Nothing runs off the right edge (the labels at the lines' ends once did, cut mid-word).
    expect(inkInColumns(decode(png), width, width - 4, width), "drawn up to the right edge, so cut off there").toBe(0);
  });

  it("--png needs a value, and is a picture of either mode", () => {
    expect(() => parseToctouFlags(["--png"])).toThrow(UsageError);
    expect(parseToctouFlags(["--png", "a.png"])).toMatchObject({ mode: "deterministic", png: "a.png", svg: undefined });
    expect(parseToctouFlags(["--mode", "race", "--png", "a.png", "--svg", "a.svg"])).toMatchObject({ mode: "race", png: "a.png", svg: "a.svg" });
  });
});

describe("toctou's report files", () => {
  // A review found a race run to its end, its escape found, then exit 2 for a report file it could not
  // write: the verdict was lost. Each file is tried before the run now, as the audit does.
  it.each(["--json", "--sarif", "--svg", "--png"])("refuses %s into a missing folder before the run (exit 2, one line, nothing run)", async (flag) => {
    const file = join(dir, "missing", "report.out");
    const { code, stdout, stderr } = await toctou([flag, file]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(new RegExp(`^toctou: cannot write ${flag} \\S+report\\.out: ENOENT[^\\n]*\\n$`));
  });
});

describe("the PNG renderer's refusals", () => {
  it("names the package and how to install it when @resvg/resvg-js is not installed", async () => {
    const missing: LoadRenderer = () => Promise.reject(new Error("Cannot find package '@resvg/resvg-js' imported from /x/png.js"));
    const refusal = await pngRenderer(missing).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PictureUnavailable);
    expect((refusal as Error).message).toBe("--png draws with @resvg/resvg-js, an optional peer dependency that is not installed here (npm i @resvg/resvg-js); --svg needs nothing");
  });

  it("says what the loader said when the package is there but cannot load, such as its binary for this platform", async () => {
    const broken: LoadRenderer = () => Promise.reject(new Error("Cannot find module '@resvg/resvg-js-linux-x64-musl'\nRequire stack:\n- /x/index.js"));
    const refusal = await pngRenderer(broken).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PictureUnavailable);
    expect((refusal as Error).message).toBe("--png draws with @resvg/resvg-js, which could not be loaded here: Cannot find module '@resvg/resvg-js-linux-x64-musl'; --svg needs nothing");
  });

  it("refuses, rather than draw a picture with no words, when no font draws text", async () => {
    // The real renderer, kept from the machine's fonts: what a machine with none would do.
    class Fontless extends Resvg {
      constructor(svg: string, options: object) {
        super(svg, { ...options, font: { loadSystemFonts: false } });
      }
    }
    const refusal = await pngRenderer(() => Promise.resolve({ Resvg: Fontless })).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PictureUnavailable);
    expect((refusal as Error).message).toContain("@resvg/resvg-js found no font on this machine to draw the picture's text");
  });
});

describe("the PNG's fonts", () => {
  it("draws sans-serif in an installed sans-serif face, as a browser would, not in the renderer's first font", async () => {
    const family = sansSerifFamily(Resvg);
    expect(SANS_SERIF_FAMILIES, "no common sans-serif face installed here").toContain(family);
    const render = await pngRenderer();
    const sample = (fonts: string) =>
      `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" font-family="${fonts}" font-size="16"><text x="4" y="26">escapes over time</text></svg>`;
    const drawnAs = (fonts: string) => decode(render(sample(fonts)));
    expect(drawnAs("system-ui, sans-serif").equals(drawnAs(`${family}`)), `sans-serif not drawn in ${family}`).toBe(true);
  });
});
