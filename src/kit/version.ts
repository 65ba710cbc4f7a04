import { readFileSync } from "node:fs";

/** The package's version, from its package.json (two levels above src/kit/ and dist/kit/). */
export const VERSION: string = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
