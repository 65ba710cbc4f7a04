/**
 * Gate 4 for size, through the read tool: for any length, the answer is the whole file up to 16 000
 * characters, and beyond that exactly the first 8 000, the marker with the exact count of dropped
 * characters, and the last 8 000. The oracle is the chapter's rule stated over the generated string.
 */
import fc from "fast-check";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AuditProperty, execute, inSandbox, toolsOf, violation } from "../property.js";

interface TruncationCase {
  length: number;
  alphabet: string[];
}

const length = fc.oneof(
  fc.integer({ min: 0, max: 200 }),
  fc.integer({ min: 15_990, max: 16_010 }),
  fc.integer({ min: 16_011, max: 60_000 }),
);
// Whole characters only (a lone surrogate does not survive UTF-8); 😀 is two UTF-16 units, so cuts
// can fall inside it, as they do for the chapter's slice().
const alphabet = fc.array(fc.constantFrom("a", "b", "\n", "é", "日", "😀", " "), { minLength: 1, maxLength: 4 });

function contentOf({ length: size, alphabet: chars }: TruncationCase): string {
  let text = "";
  for (let index = 0; text.length < size; index++) text += chars[index % chars.length];
  return text.slice(0, size).replace(/[\uD800-\uDBFF]$/, "a");
}

export const truncationRead: AuditProperty<TruncationCase> = {
  id: "truncation.read",
  gate: "truncation",
  kind: "guarantee",
  title: "read keeps 8 000 + 8 000 characters and reports the exact number dropped",
  needs: ["createWorkspaceTools"],
  arbitrary: fc.record({ length, alphabet }),
  render: (value) => `read of a file of ${value.length} characters drawn from ${JSON.stringify(value.alphabet)}`,
  async check(target, value) {
    await inSandbox(async (box) => {
      const content = contentOf(value);
      await writeFile(join(box.root, "file.txt"), content);
      const result = await execute(toolsOf(target, box.root).read, { path: "file.txt" });
      const expected =
        content.length <= 16_000
          ? content
          : [content.slice(0, 8_000), `[truncated ${content.length - 16_000} characters]`, content.slice(content.length - 8_000)].join("\n");
      if (result.isError === true || result.content !== expected)
        violation(`for ${content.length} characters expected ${describe(expected)}, got ${describe(String(result.content))}`);
    });
  },
};

function describe(text: string): string {
  const marker = /\[truncated \d+ characters\]/.exec(text)?.[0] ?? "no marker";
  return `${text.length} characters (${marker})`;
}
