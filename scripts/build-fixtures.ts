/**
 * Compiles the forks the lessons audit (fixtures/vulnerable/, fixtures/lessons/) into
 * dist/fixtures/, so an installed package runs the lessons without tsx: `npx workspace-gates audit
 * node_modules/workspace-gates/dist/fixtures/vulnerable/similar-prefix.js`. Part of `npm run build`.
 *
 * Promises: one .js per .ts, each transpiled alone (the type check is `npm run typecheck`'s), with its
 * imports of the product (`../../src/gates/…`) pointed at the compiled product beside it in dist/
 * (`../../gates/…`); any other import that leaves the fixtures is refused, as it would not resolve.
 */
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";

const FOLDERS = ["fixtures/vulnerable", "fixtures/lessons"] as const;
const OUT = "dist/fixtures";

const PRODUCT = /(from\s+|import\()"\.\.\/\.\.\/src\//g;
const LEAVING = /(?:from\s+|import\()"(\.\.\/\.\.\/[^"]*)"/;

await rm(OUT, { recursive: true, force: true });
for (const folder of FOLDERS) {
  const out = join(OUT, folder.slice("fixtures/".length));
  await mkdir(out, { recursive: true });
  for (const name of (await readdir(folder)).filter((file) => file.endsWith(".ts"))) {
    const source = await readFile(join(folder, name), "utf8");
    const { outputText } = ts.transpileModule(source, {
      fileName: name,
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    const compiled = outputText.replace(PRODUCT, '$1"../../');
    const leaving = LEAVING.exec(compiled)?.[1];
    if (leaving !== undefined && !/^\.\.\/\.\.\/(gates|tools|agent|verified)\//.test(leaving)) throw new Error(`${folder}/${name} imports ${leaving}, which dist/fixtures cannot reach`);
    await writeFile(join(out, name.replace(/\.ts$/, ".js")), compiled);
  }
}
console.log(`compiled ${FOLDERS.join(" and ")} into ${OUT}`);
