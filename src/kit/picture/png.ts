/**
 * The kit's SVG pictures as PNG, for a slide: `toctou --png FILE` draws the same picture as `--svg`.
 *
 * Promises: `pngRenderer` loads the renderer (`@resvg/resvg-js`, an optional peer dependency) once and
 * answers a function that turns an SVG into a PNG `PNG_SCALE` times its width and height, on white,
 * with its text drawn in the machine's fonts (sans-serif in the first of `SANS_SERIF_FAMILIES` the
 * machine has, as a browser would, not the renderer's first font, which may be a serif). When the package is not installed, or no font on the
 * machine draws text, it throws `PictureUnavailable` saying which and how to fix it, so a command can
 * refuse before its run rather than after; and a picture whose text would come out blank throws too,
 * never a PNG with no words.
 * Does not promise: the same pixels on every machine (the fonts are the machine's own).
 */
export const PNG_SCALE = 2;
export const PNG_RENDERER = "@resvg/resvg-js";

export class PictureUnavailable extends Error {
  override name = "PictureUnavailable";
}

/** The piece of the renderer's API used here, so a test can stand in a missing package. */
export type LoadRenderer = () => Promise<{ Resvg: ResvgClass }>;
type ResvgClass = new (svg: string, options: object) => { render(): { width: number; height: number; pixels: Buffer; asPng(): Buffer } };

const loadResvg: LoadRenderer = async () => (await import("@resvg/resvg-js")) as unknown as { Resvg: ResvgClass };

/** Sans-serif faces common on Linux, macOS and Windows, in the order tried for the pictures' sans-serif. */
export const SANS_SERIF_FAMILIES = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Helvetica", "Arial", "Segoe UI", "FreeSans"];

const TEXT_ELEMENT = /<text\b[^>]*>[\s\S]*?<\/text>/g;
const PROBE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="30" font-family="sans-serif" font-size="16"><text x="4" y="22">TOCTOU</text></svg>`;

/** Turns an SVG the kit drew into PNG bytes, or throws `PictureUnavailable` (see the module's promise). */
export type RenderPng = (svg: string) => Buffer;

export async function pngRenderer(load: LoadRenderer = loadResvg): Promise<RenderPng> {
  let Resvg: ResvgClass;
  try {
    ({ Resvg } = await load());
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
    // Not installed is the usual case and says no more; anything else (its native binary missing for
    // this platform, say) is the loader's own first line.
    if (reason.includes(`'${PNG_RENDERER}'`))
      throw new PictureUnavailable(`--png draws with ${PNG_RENDERER}, an optional peer dependency that is not installed here (npm i ${PNG_RENDERER}); --svg needs nothing`);
    throw new PictureUnavailable(`--png draws with ${PNG_RENDERER}, which could not be loaded here: ${reason}; --svg needs nothing`);
  }
  const sansSerif = sansSerifFamily(Resvg);
  // resvg 2.6 maps the generic sans-serif to Arial and, failing that, to the machine's first font: only
  // the default family carries an installed face through.
  const font = sansSerif === undefined ? { loadSystemFonts: true } : { loadSystemFonts: true, defaultFontFamily: sansSerif, sansSerifFamily: sansSerif };
  const draw = (svg: string) => new Resvg(svg, { background: "white", fitTo: { mode: "zoom", value: PNG_SCALE }, font }).render();
  const render: RenderPng = (svg) => {
    const drawn = draw(svg);
    const words = svg.match(TEXT_ELEMENT);
    // The renderer draws text it has no font for as nothing, silently: a picture whose pixels do not
    // change when its text is taken out has lost its words.
    if (words !== null && drawn.pixels.equals(draw(svg.replace(TEXT_ELEMENT, "")).pixels))
      throw new PictureUnavailable(`${PNG_RENDERER} found no font on this machine to draw the picture's text (install one, e.g. fonts-dejavu-core); --svg needs none`);
    return drawn.asPng();
  };
  render(PROBE_SVG);
  return render;
}

/** The first of `SANS_SERIF_FAMILIES` installed here: one whose text differs from a family no machine has. */
export function sansSerifFamily(Resvg: ResvgClass): string | undefined {
  const probe = (family: string) =>
    new Resvg(`<svg xmlns="http://www.w3.org/2000/svg" width="60" height="24"><text x="2" y="18" font-size="16" font-family="${family}">Ag</text></svg>`, {
      font: { loadSystemFonts: true },
    }).render().pixels;
  const fallback = probe("workspace-gates-no-such-font");
  return SANS_SERIF_FAMILIES.find((family) => !probe(family).equals(fallback));
}
