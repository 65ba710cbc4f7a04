import { readFile } from "node:fs/promises";

/** The first `js` code block of docs/arbitraries.md: the example users copy. */
export async function arbitrariesExample(): Promise<string> {
  const doc = await readFile("docs/arbitraries.md", "utf8");
  const block = /```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error("docs/arbitraries.md has no js example");
  return block;
}

/** What the example prints when it finds the mistake. */
export const EXAMPLE_FINDING = /^startsWith\(root\) says ".*" is inside \/.*; it is not\n$/;
