/**
 * The course in docs/lessons/: one lesson per vulnerable fork, in teaching order. Each lesson page shows
 * the fork (fixtures/vulnerable/VARIANT.ts), the audit command that fails it, the fixed module
 * (fixtures/lessons/VARIANT.ts) and the command that passes it; the code on the page is generated from
 * those files (`npm run lessons`), and test/lessons.test.ts runs the page's own commands.
 */
import type { GeneratedSection } from "./generated-section.js";

export const LESSON_VARIANTS = ["similar-prefix", "raw-candidate", "nul-after-check", "silent-truncation"] as const;

export interface Lesson {
  variant: string;
  page: string;
  fork: string;
  fixed: string;
  sections: { fork: GeneratedSection; fixed: GeneratedSection };
}

export const LESSONS: readonly Lesson[] = LESSON_VARIANTS.map((variant, index) => {
  const page = `docs/lessons/${index + 1}-${variant}.md`;
  const section = (name: string): GeneratedSection => ({ file: page, name, command: "npm run lessons" });
  return {
    variant,
    page,
    fork: `fixtures/vulnerable/${variant}.ts`,
    fixed: `fixtures/lessons/${variant}.ts`,
    sections: { fork: section("fork"), fixed: section("fixed") },
  };
});

/** `npx workspace-gates audit ARGS   # exits N`: a lesson's command as a project that installed the package runs it. */
export const INSTALLED_LESSON_COMMAND = /^npx workspace-gates audit (.+?)\s+# exits (\d)$/gm;

/** A module's source as a lesson page shows it. */
export function codeBlock(source: string): string {
  return ["```ts", source.trimEnd(), "```"].join("\n");
}
