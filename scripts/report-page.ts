// `npm run report-page`: the picture of the page `audit --html` writes, shown in README.md. Audits a
// fork of the lessons (similar-prefix: a read that leaves by ../ws-other, a hardlink the reference
// cannot see) at a fixed seed, writes its page, opens it in the headless Chromium the tests use, and
// saves the top of the page down to its first drawn counterexample as docs/report-page.png.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../src/kit/cli.js";
import { launchChromium } from "../test/support/browser.js";

const REPORT_PAGE_PICTURE = "docs/report-page.png";

const dir = await mkdtemp(join(tmpdir(), "workspace-gates-report-page-"));
const browser = await launchChromium();
try {
  const html = join(dir, "audit.html");
  const argv = ["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read,limits.hardlink", "--seed", "1", "--runs", "30", "--html", html];
  const code = await main(argv, { stdout: () => undefined, stderr: (text) => void process.stderr.write(text), invocation: (command) => `npx workspace-gates ${command}` });
  if (code !== 1) throw new Error(`the audit of the fork exited ${code}, not 1: it should fail`);
  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 800 });
  await page.goto(`file://${html}`, { waitUntil: "load" });
  // Down to the end of the first finding: the verdict, the tables, and one counterexample drawn.
  const bottom = await page.evaluate(() => Math.ceil((document.querySelector("article.finding")?.getBoundingClientRect().bottom ?? 800) + window.scrollY + 16));
  await writeFile(REPORT_PAGE_PICTURE, await page.screenshot({ clip: { x: 0, y: 0, width: 1100, height: bottom } }));
  process.stdout.write(`wrote ${REPORT_PAGE_PICTURE} (1100 × ${bottom})\n`);
} finally {
  await browser.close();
  await rm(dir, { recursive: true, force: true });
}
