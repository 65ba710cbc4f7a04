// A real headless browser for the tests that check what a page or a picture shows: the Chromium the
// @sparticuz/chromium development dependency ships, driven by puppeteer-core, so nothing is downloaded.
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser } from "puppeteer-core";
import type { PlatformNeed } from "./platform.js";

export const CHROMIUM: PlatformNeed = { missing: process.platform !== "linux" || process.arch !== "x64", reason: "Linux x64 only: the packaged Chromium is built for it" };

export async function launchChromium(): Promise<Browser> {
  return puppeteer.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
}
