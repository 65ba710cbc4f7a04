// `npm run lessons`: writes the code of each lesson's fork and fix into its page under docs/lessons/,
// from fixtures/vulnerable/ and fixtures/lessons/; test/lessons.test.ts holds the pages to the files.
import { readFile } from "node:fs/promises";
import { writeSectionToFile } from "../test/support/generated-section.js";
import { LESSONS, codeBlock } from "../test/support/lessons.js";

for (const lesson of LESSONS) {
  await writeSectionToFile(lesson.sections.fork, codeBlock(await readFile(lesson.fork, "utf8")));
  await writeSectionToFile(lesson.sections.fixed, codeBlock(await readFile(lesson.fixed, "utf8")));
  process.stdout.write(`wrote ${lesson.page}\n`);
}
