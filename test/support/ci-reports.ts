// Readers of the CI reports as CI systems read them: JUnit through an XML parser and against the
// schema Jenkins reads it by (junit-10.xsd, with xmllint), SARIF against the 2.1.0 schema and through
// Microsoft's SARIF Multitool with GitHub's rules.
import AjvModule from "ajv-draft-04";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { execFile } from "node:child_process";
import { access, constants, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { validateXML } from "xmllint-wasm";

const require = createRequire(import.meta.url);
const schemaFile = require.resolve("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");

// htmlEntities: decode numeric character references (&#10; in an attribute) as an XML reader does.
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", htmlEntities: true, isArray: (name) => name === "testcase" || name === "property" });

export interface JUnitCase {
  classname: string;
  name: string;
  failure?: { "#text": string; message: string; type: string };
  skipped?: { message: string };
  "system-out"?: string;
}

export function parseJUnit(xml: string) {
  expect(XMLValidator.validate(xml)).toBe(true);
  const suites = (parser.parse(xml) as { testsuites: Record<string, unknown> & { testsuite: Record<string, string> & { testcase: JUnitCase[] } } }).testsuites;
  return { suites, cases: new Map(suites.testsuite.testcase.map((testcase) => [testcase.name, testcase])) };
}

/** A validator of SARIF 2.1.0 logs, with the errors of its last call. */
export async function sarifValidator(): Promise<{ validate: (log: unknown) => boolean; errors: () => unknown }> {
  // A CommonJS module with its class on `default`: NodeNext types see the namespace.
  const Ajv = AjvModule as unknown as typeof AjvModule.default;
  // unicodeRegExp off: the schema's language pattern is not a valid regular expression under the u flag.
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  const validate = ajv.compile(JSON.parse(await readFile(schemaFile, "utf8")) as object);
  return { validate: (log) => validate(log) as boolean, errors: () => validate.errors };
}

const junitSchema = new URL("junit-10.xsd", import.meta.url);

/** What xmllint finds wrong with a JUnit report against the schema Jenkins reads it by; empty when valid. */
export async function junitSchemaErrors(xml: string): Promise<string[]> {
  const { errors } = await validateXML({ xml: [{ fileName: "report.xml", contents: xml }], schema: [await readFile(junitSchema, "utf8")] });
  return errors.map((error) => error.rawMessage);
}

// @microsoft/sarif-multitool answers the path of the native binary its platform package ships.
const multitool = require("@microsoft/sarif-multitool") as string;

/**
 * The rules the Multitool's `validate` runs: SARIF's own (`Sarif`: SARIF1xxx errors, SARIF2xxx
 * advice) and GitHub code scanning's (`Gh`: GH1001-GH1018, GH2012, what upload-sarif needs), besides
 * the schema (JSON1xxx), which it always checks.
 */
export const MULTITOOL_RULE_KINDS = "Sarif;Gh";

interface ValidationLog {
  runs: {
    tool: { driver: { rules?: { id: string; defaultConfiguration?: { level?: string } }[] } };
    invocations?: { executionSuccessful: boolean; toolExecutionNotifications?: { level?: string; message: { text?: string } }[] }[];
    results?: { ruleId: string; level?: string; message: { id?: string; text?: string; arguments?: string[] }; locations?: { physicalLocation: { artifactLocation: { uri: string } } }[] }[];
  }[];
}

/**
 * Every error the SARIF Multitool reports for these logs with `MULTITOOL_RULE_KINDS`, as
 * `file: RULE MESSAGE-ID: where: what` (an empty list: GitHub accepts them). It exits 0 either way, so its own
 * log is read: a result's level is its own, else its rule's default, else warning (SARIF's).
 */
export async function multitoolErrors(files: readonly string[]): Promise<string[]> {
  await access(multitool, constants.X_OK).catch(() => {
    throw new Error(`the SARIF Multitool (${multitool}) is not executable: npm ci runs the chmod of @microsoft/sarif-multitool-linux's install script`);
  });
  const scratch = await mkdtemp(join(tmpdir(), "workspace-gates-multitool-"));
  try {
    const output = join(scratch, "validation.sarif");
    await promisify(execFile)(multitool, ["validate", ...files, "--rule-kind", MULTITOOL_RULE_KINDS, "--output", output, "--log", "ForceOverwrite"], { timeout: 120_000 });
    const [run] = (JSON.parse(await readFile(output, "utf8")) as ValidationLog).runs;
    if (run === undefined) throw new Error("the SARIF Multitool wrote no run");
    const [invocation] = run.invocations ?? [];
    const failedRun = invocation?.executionSuccessful === false || (invocation?.toolExecutionNotifications ?? []).some((notification) => notification.level === "error");
    if (failedRun) throw new Error(`the SARIF Multitool did not validate: ${JSON.stringify(invocation)}`);
    const defaults = new Map((run.tool.driver.rules ?? []).map((rule) => [rule.id, rule.defaultConfiguration?.level]));
    return (run.results ?? [])
      .filter((result) => (result.level ?? defaults.get(result.ruleId) ?? "warning") === "error")
      .map((result) => `${result.locations?.[0]?.physicalLocation.artifactLocation.uri ?? "?"}: ${result.ruleId} ${result.message.id ?? ""}: ${result.message.text ?? (result.message.arguments ?? []).join(": ")}`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
